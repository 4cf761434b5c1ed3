import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as automations from '../../domain/automations/automations.ts';
import { triggerEvent, type Step } from '../../domain/automations/graph.ts';
import { listRuns } from '../../domain/automations/runs.ts';
import { findSegmentOrThrow } from '../../domain/contacts/segments.ts';
import { getTemplate } from '../../domain/templates/templates.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { csrfField, status, when } from '../page-parts.ts';
import { pager, readPage } from '../paging.ts';
import { pathId } from '../path-id.ts';
import { automationRunPages } from './automation-runs.ts';
import { graphDrawing, stepsTable, type ReferenceNames } from './automation-graph.ts';

// Automations: the list, and an automation's page (its graph drawn, its steps, its runs, and Stop),
// over the domain functions of GET /automations, GET /automations/:id, its /runs and /stop.

const PAGE_SIZE = 50;
const HTML = 'text/html; charset=utf-8';
const STATUSES = ['enabled', 'disabled'];
const RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled'];
type Query = Record<string, string | undefined>;

/** Notices after a redirect, by code: the query string never carries the text itself. */
const NOTICES: Record<string, string> = {
  stopped: 'The automation is stopped: disabled, and its runs in progress cancelled.',
};

/** A status filter: a select of the known values (anything else is no filter), and its button. */
function statusFilter(action: string, label: string, values: string[], chosen: string | undefined): Html {
  return html`<form class="filters" method="get" action="${action}">
<label>${label}<select name="status"><option value="">any</option>${values.map((s) => html`<option value="${s}"${chosen === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<button type="submit">Filter</button> <a href="${action}">Clear</a>
</form>`;
}

/** The names of the project's templates and segments the steps send and add to, each looked up once; one deleted since goes unnamed. */
async function referenceNames(ctx: Context, project: string, steps: Step[]): Promise<ReferenceNames> {
  const refs = new Map<string, () => Promise<{ name: string }>>();
  for (const step of steps) {
    if (step.type === 'send_email') refs.set(`template:${step.config.template.id}`, () => getTemplate(ctx, project, step.config.template.id));
    if (step.type === 'add_to_segment') refs.set(`segment:${step.config.segment_id}`, () => findSegmentOrThrow(ctx, project, step.config.segment_id));
  }
  const names = await Promise.all([...refs].map(([ref, find]) => find().then((row): [string, string][] => [[ref, row.name]], () => [])));
  return new Map(names.flat());
}

const chosen = (query: Query, values: string[]) => (query.status && values.includes(query.status) ? query.status : undefined);

export function automationPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const }, schema: { hide: true } };
  const send = (request: FastifyRequest, title: string, content: Html, notice?: string) =>
    page(title, content, { section: 'automations', csrfToken: request.session!.csrfToken, notice });

  app.get('/automations', route, async (request, reply) => {
    const query = request.query as Query;
    const filter = chosen(query, STATUSES);
    const list = await automations.listAutomations(ctx, request.session!.projectId, readPage(query, PAGE_SIZE), filter);
    const content = html`${statusFilter('/dashboard/automations', 'Status', STATUSES, filter)}
<table class="list">
<caption class="visually-hidden">Automations, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Updated</th></tr></thead>
<tbody>${
      list.data.length === 0
        ? html`<tr><td colspan="4">No automations${filter ? html` ${filter}` : ''}. They are made with <code>POST /automations</code>.</td></tr>`
        : list.data.map(
            (a) => html`<tr><td><a href="/dashboard/automations/${a.id}">${a.name}</a></td><td>${status(a.status)}</td><td>${when(a.created_at)}</td><td>${when(a.updated_at)}</td></tr>`,
          )
    }</tbody>
</table>
${pager('/dashboard/automations', { status: filter }, list)}`;
    return reply.type(HTML).send(send(request, 'Automations', content));
  });

  app.get('/automations/:id', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Automation');
    const query = request.query as Query;
    const filter = chosen(query, RUN_STATUSES);
    const project = request.session!.projectId;
    const [automation, runs, running] = await Promise.all([
      automations.getAutomation(ctx, project, id),
      listRuns(ctx, project, id, readPage(query, PAGE_SIZE), filter),
      listRuns(ctx, project, id, { limit: 1, after: undefined, before: undefined }, 'running'),
    ]);
    const graph = { steps: automation.steps, connections: automation.connections };
    const names = await referenceNames(ctx, project, graph.steps);
    const event = triggerEvent(graph);
    const stoppable = automation.status === 'enabled' || running.data.length > 0;
    const content = html`<dl class="facts">
<dt>Status</dt><dd>${status(automation.status)}</dd>
<dt>Started by</dt><dd>the event <code>${event}</code></dd>
<dt>Created</dt><dd>${when(automation.created_at)}</dd>
<dt>Updated</dt><dd>${when(automation.updated_at)}</dd>
<dt>Id</dt><dd><code>${id}</code> <button type="button" class="secondary" data-copy="${id}">Copy</button></dd>
</dl>
${
  stoppable
    ? html`<div class="actions"><form class="inline" method="post" action="/dashboard/automations/${id}/stop" data-confirm="Stop this automation? It is disabled, and its runs in progress are cancelled.">${csrfField(request)}<button type="submit" class="danger">Stop</button></form></div>`
    : ''
}
<section aria-labelledby="graph"><h2 id="graph">Steps</h2>
${graphDrawing(automation.name, graph, names)}
${stepsTable(graph, names)}
</section>
<section aria-labelledby="runs"><h2 id="runs">Runs</h2>
${statusFilter(`/dashboard/automations/${id}`, 'Run status', RUN_STATUSES, filter)}
<table class="list">
<caption class="visually-hidden">Runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Contact</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Completed</th></tr></thead>
<tbody>${
      runs.data.length === 0
        ? html`<tr><td colspan="5">No runs${filter ? html` ${filter}` : ''}: an event <code>${event}</code> starts one while the automation is enabled.</td></tr>`
        : runs.data.map(
            (r) => html`<tr><td><a href="/dashboard/automations/${id}/runs/${r.id}"><code>${r.id}</code></a></td><td>${r.email}</td><td>${status(r.status)}</td><td>${when(r.started_at)}</td><td>${when(r.completed_at)}</td></tr>`,
          )
    }</tbody>
</table>
${pager(`/dashboard/automations/${id}`, { status: filter }, runs)}
</section>`;
    return reply.type(HTML).send(send(request, automation.name, content, query.done ? NOTICES[query.done] : undefined));
  });

  app.post('/automations/:id/stop', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Automation');
    await automations.stopAutomation(ctx, request.session!.projectId, id);
    return reply.redirect(`/dashboard/automations/${id}?done=stopped`, 303);
  });

  automationRunPages(app, ctx);
}
