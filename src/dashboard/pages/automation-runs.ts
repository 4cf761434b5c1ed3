import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { findAutomationOrThrow } from '../../domain/automations/automations.ts';
import { getRun } from '../../domain/automations/runs.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { status, when } from '../page-parts.ts';
import { pathId } from '../path-id.ts';

// One run of an automation: the event that started it, and each step it reached in that order, with
// its status, times, output and error. Over the domain function of GET /automations/:id/runs/:run_id.

const json = (value: unknown) => (value === null || value === undefined ? '' : html`<pre>${JSON.stringify(value, null, 2)}</pre>`);

/** A step's output, and a link to the email it sent. */
function output(step: { type: string; output: Record<string, unknown> | null }) {
  const emailId = step.type === 'send_email' ? step.output?.email_id : undefined;
  return html`${json(step.output)}${typeof emailId === 'string' ? html`<a href="/dashboard/emails/${emailId}">The email</a>` : ''}`;
}

export function automationRunPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const }, schema: { hide: true } };

  app.get('/automations/:id/runs/:run_id', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Automation');
    const project = request.session!.projectId;
    const run = await getRun(ctx, project, id, pathId(request, 'run_id', 'Automation run'));
    const automation = await findAutomationOrThrow(ctx, project, id);
    const content = html`<p><a href="/dashboard/automations/${id}">Back to ${automation.name}</a></p>
<dl class="facts">
<dt>Status</dt><dd>${status(run.status)}</dd>
<dt>Contact</dt><dd><a href="/dashboard/contacts/${run.contact_id}">${run.email}</a></dd>
<dt>Started</dt><dd>${when(run.started_at)}</dd>
<dt>Completed</dt><dd>${when(run.completed_at, 'not yet')}</dd>
<dt>Run id</dt><dd><code>${run.id}</code></dd>
</dl>
<section aria-labelledby="steps"><h2 id="steps">Steps</h2>
<table class="list run-steps">
<caption class="visually-hidden">The steps this run reached, in order</caption>
<thead><tr><th scope="col">Step</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Completed</th><th scope="col">Output</th><th scope="col">Error</th></tr></thead>
<tbody>${run.steps.map(
      (s) => html`<tr><th scope="row"><code>${s.key}</code></th><td>${s.type}</td><td>${status(s.status)}</td><td>${when(s.started_at)}</td><td>${when(s.completed_at)}</td><td>${output(s)}</td><td>${json(s.error)}</td></tr>`,
    )}</tbody>
</table></section>
<section aria-labelledby="event"><h2 id="event">Event</h2>
<p>The event <code>${run.event.name}</code> started this run, with this payload:</p>
${json(run.event.payload)}
</section>`;
    return reply.type('text/html; charset=utf-8').send(page(`Run for ${run.email}`, content, { section: 'automations', csrfToken: request.session!.csrfToken }));
  });
}
