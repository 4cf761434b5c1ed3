// Automations: a name, a status and a graph. Every change of the graph writes a new version and makes
// it current; runs keep the version they started on, so a run in progress finishes as it began.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, clip, invalidField, missingField, notFound } from '../../errors.ts';
import { isUuid, newId } from '../../time/ids.ts';
import { cancelRuns, findOpenSteps } from '../../store/automation-runs.ts';
import * as store from '../../store/automations.ts';
import type { Tx } from '../../store/db.ts';
import type { PageRequest } from '../../store/paginate.ts';
import { findSegmentIds } from '../../store/segments.ts';
import { findPublishedTemplate } from '../../store/templates.ts';
import { checkGraph, triggerEvent, type Graph } from './graph.ts';
import { cancelOpenSteps, graphOf } from './run-steps.ts';

const STATUSES = ['enabled', 'disabled'];
const MAX_NAME = 255;

export interface AutomationInput {
  name?: unknown;
  status?: unknown;
  steps?: unknown;
  connections?: unknown;
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw missingField('name');
  if (name.length > MAX_NAME) throw invalidField('name', `at most ${MAX_NAME} characters.`);
  return name;
}

function checkStatus(status: unknown): 'enabled' | 'disabled' {
  if (!STATUSES.includes(status as string)) throw invalidField('status', 'must be "enabled" or "disabled".');
  return status as 'enabled' | 'disabled';
}

/**
 * The graph's rules that need the database: each template the project's and published (with a sender
 * and a subject, its own or the step's), each segment the project's. Another project's is a missing one.
 */
async function checkReferences(ctx: Context, project: string, graph: Graph): Promise<void> {
  for (const step of graph.steps) {
    if (step.type === 'send_email') {
      const version = (await findPublishedTemplate(ctx.db, project, step.config.template.id))?.version;
      if (!version) throw new AppError('validation_error', `Invalid step \`${step.key}\`: no published template has the id or alias \`${clip(step.config.template.id)}\`.`);
      for (const field of ['from', 'subject'] as const) {
        if (step.config[field] === undefined && !version[field]) {
          throw new AppError('validation_error', `Invalid step \`${step.key}\`: no \`${field}\`: give \`config.${field}\`, or set the template's.`);
        }
      }
    }
    if (step.type === 'add_to_segment' && !(await findSegmentIds(ctx.db, project, [step.config.segment_id.toLowerCase()])).size) {
      throw new AppError('validation_error', `Invalid step \`${step.key}\`: there is no segment with id \`${clip(step.config.segment_id)}\`.`);
    }
  }
}

async function checkedGraph(ctx: Context, project: string, steps: unknown, connections: unknown): Promise<Graph> {
  const graph = checkGraph(steps, connections);
  await checkReferences(ctx, project, graph);
  return graph;
}

function versionRow(automationId: string, graph: Graph, at: string): store.AutomationVersionRow {
  return { id: newId(), automation_id: automationId, steps: JSON.stringify(graph.steps), connections: JSON.stringify(graph.connections), created_at: at };
}

async function insertAutomation(ctx: Context, project: string, name: string, status: string, graph: Graph): Promise<{ id: string }> {
  const at = toTimestamp(ctx.clock.now());
  const id = newId();
  const version = versionRow(id, graph, at);
  await ctx.writer.transaction((tx) =>
    store.insertAutomation(tx, { id, project_id: project, name, status, version_id: version.id, trigger_event: triggerEvent(graph), created_at: at, updated_at: at }, version),
  );
  return { id };
}

/** POST /automations: disabled unless `status` says enabled. */
export async function createAutomation(ctx: Context, project: string, input: AutomationInput): Promise<{ id: string }> {
  const name = checkName(input.name);
  const status = input.status === undefined ? 'disabled' : checkStatus(input.status);
  if (input.steps === undefined) throw missingField('steps');
  if (input.connections === undefined) throw missingField('connections');
  return insertAutomation(ctx, project, name, status, await checkedGraph(ctx, project, input.steps, input.connections));
}

/** The project's automation; another project's is not found, as a missing one. */
export async function findAutomationOrThrow(ctx: Context, project: string, id: string): Promise<store.AutomationRow> {
  const automation = isUuid(id) ? await store.findAutomation(ctx.db, project, id.toLowerCase()) : undefined;
  if (!automation) throw notFound('Automation');
  return automation;
}

/** GET /automations/:id: the automation with its current graph. */
export async function getAutomation(ctx: Context, project: string, id: string) {
  const automation = await findAutomationOrThrow(ctx, project, id);
  const graph = await graphOf(ctx.db, automation.version_id);
  const { name, status, created_at, updated_at } = automation;
  return { object: 'automation' as const, id: automation.id, name, status, created_at, updated_at, steps: graph.steps, connections: graph.connections };
}

export async function listAutomations(ctx: Context, project: string, page: PageRequest, status: string | undefined) {
  return store.listAutomations(ctx.db, project, page, status === undefined ? undefined : checkStatus(status));
}

/** PATCH /automations/:id: the name, the status, or the graph (steps and connections together, as a new version). */
export async function updateAutomation(ctx: Context, project: string, id: string, input: AutomationInput): Promise<{ id: string }> {
  const automation = await findAutomationOrThrow(ctx, project, id);
  if ([input.name, input.status, input.steps, input.connections].every((v) => v === undefined)) {
    throw new AppError('validation_error', 'Give at least one of `name`, `status`, or `steps` with `connections`.');
  }
  if ((input.steps === undefined) !== (input.connections === undefined)) {
    throw new AppError('validation_error', '`steps` and `connections` are given together: the graph is replaced whole.');
  }
  const changes: Partial<store.AutomationRow> = {};
  if (input.name !== undefined) changes.name = checkName(input.name);
  if (input.status !== undefined) changes.status = checkStatus(input.status);
  const graph = input.steps === undefined ? undefined : await checkedGraph(ctx, project, input.steps, input.connections);
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    if (graph) {
      const version = versionRow(automation.id, graph, at);
      await store.insertVersion(tx, version);
      Object.assign(changes, { version_id: version.id, trigger_event: triggerEvent(graph) });
    }
    await store.updateAutomation(tx, project, automation.id, { ...changes, updated_at: at });
  });
  return { id: automation.id };
}

/** Cancels an automation's running runs, their open steps and those steps' jobs, in `tx`. */
async function cancelAllRuns(tx: Tx, automationId: string, at: string): Promise<void> {
  await cancelOpenSteps(tx, await findOpenSteps(tx, automationId), at);
  await cancelRuns(tx, automationId, at);
}

/** POST /automations/:id/stop: disables it and cancels its runs in progress with their pending steps. */
export async function stopAutomation(ctx: Context, project: string, id: string) {
  const automation = await findAutomationOrThrow(ctx, project, id);
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    await store.updateAutomation(tx, project, automation.id, { status: 'disabled', updated_at: at });
    await cancelAllRuns(tx, automation.id, at);
  });
  return { object: 'automation' as const, id: automation.id, status: 'disabled' as const };
}

/** DELETE /automations/:id: cancels its runs' pending steps, then deletes it with its versions and runs. */
export async function deleteAutomation(ctx: Context, project: string, id: string) {
  const automation = await findAutomationOrThrow(ctx, project, id);
  await ctx.writer.transaction(async (tx) => {
    await cancelAllRuns(tx, automation.id, toTimestamp(ctx.clock.now()));
    await store.deleteAutomation(tx, project, automation.id);
  });
  return { object: 'automation' as const, id: automation.id, deleted: true as const };
}

/** POST /automations/:id/duplicate: a disabled copy of its current graph, named "<name> (copy)". */
export async function duplicateAutomation(ctx: Context, project: string, id: string): Promise<{ id: string }> {
  const automation = await findAutomationOrThrow(ctx, project, id);
  const graph = await graphOf(ctx.db, automation.version_id);
  return insertAutomation(ctx, project, `${automation.name} (copy)`.slice(0, MAX_NAME), 'disabled', graph);
}
