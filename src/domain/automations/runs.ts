// POST /events/send, and what it starts and ends: a run of every enabled automation the event
// triggers, for its contact, and every wait of that contact's runs for an event of that name (whose
// filter it passes). All of it is written in one transaction, before the 202.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, invalidField, notFound } from '../../errors.ts';
import { isUuid, newId } from '../../time/ids.ts';
import * as runs from '../../store/automation-runs.ts';
import { findTriggered } from '../../store/automations.ts';
import { findContactByEmail, findContactById, type ContactRow } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { remove } from '../../jobs/enqueue.ts';
import { json, parsed } from '../../store/json.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import { contactEmail } from '../contacts/contact-input.ts';
import { ensureContact } from '../contacts/contacts.ts';
import { findAutomationOrThrow } from './automations.ts';
import { checkEventName, checkPayload } from './custom-events.ts';
import type { Graph, Step } from './graph.ts';
import { advance, contactScope, graphOf, recordOutcome, stepJobKey, type RunEvent } from './run-steps.ts';
import { evaluate } from './rules.ts';

export interface SendEventInput {
  event?: unknown;
  contact_id?: unknown;
  email?: unknown;
  payload?: unknown;
}

/** Starts a run of `automation` for `contact`: the trigger completes at once and its next steps open. */
async function startRun(ctx: Context, tx: Tx, automation: { id: string; version_id: string }, graph: Graph, contact: ContactRow, event: RunEvent, now: number) {
  const at = toTimestamp(now);
  const run: runs.RunRow = {
    id: newId(),
    automation_id: automation.id,
    version_id: automation.version_id,
    contact_id: contact.id,
    email: contact.email,
    status: 'running',
    event: JSON.stringify(event),
    started_at: at,
    completed_at: null,
    created_at: at,
  };
  await runs.insertRun(tx, run);
  const trigger = graph.steps.find((s) => s.type === 'trigger')!;
  const triggered: runs.RunStepRow = {
    id: newId(),
    run_id: run.id,
    key: trigger.key,
    type: 'trigger',
    status: 'completed',
    output: json({ event: event.name }),
    error: null,
    wait_event: null,
    contact_id: contact.id,
    started_at: at,
    completed_at: at,
    created_at: at,
  };
  await advance(ctx, tx, run, graph, trigger.key, 'default', now, [triggered]);
}

/** Ends `step`'s wait with the event, if its run still runs and the event passes the step's filter. */
async function endWait(ctx: Context, tx: Tx, row: runs.RunStepRow, event: RunEvent, contact: Record<string, unknown> | undefined, now: number) {
  const run = await runs.lockRun(tx, row.run_id);
  if (run?.status !== 'running') return;
  const graph = await graphOf(tx, run.version_id);
  const step = graph.steps.find((s) => s.key === row.key) as Extract<Step, { type: 'wait_for_event' }>;
  if (step.config.filter_rule && !evaluate(step.config.filter_rule, { event: event.payload, contact })) return;
  const outcome = { status: 'completed' as const, output: { event: event.name, payload: event.payload }, branch: 'event_received' as const };
  if (await recordOutcome(ctx, tx, run, graph, row, outcome, now)) await remove(tx, [stepJobKey(row.id)]);
}

function contactOf(input: SendEventInput): { id: string } | { email: string } {
  const hasId = input.contact_id !== undefined && input.contact_id !== null;
  const hasEmail = input.email !== undefined && input.email !== null;
  if (hasId === hasEmail) throw new AppError('validation_error', 'Exactly one of `contact_id` or `email` must be provided.');
  if (hasEmail) {
    if (typeof input.email !== 'string') throw invalidField('email', 'a string is required.');
    return { email: contactEmail(input.email) };
  }
  if (typeof input.contact_id !== 'string' || !isUuid(input.contact_id)) throw invalidField('contact_id', 'must be a contact\'s id.');
  return { id: input.contact_id.toLowerCase() };
}

/**
 * POST /events/send, an event of the key's project: it starts that project's automations, for that
 * project's contact. An event for an email that is no contact creates the contact when an automation
 * starts for it (as Resend does); with nothing to start, it creates nothing.
 */
export async function sendEvent(ctx: Context, project: string, input: SendEventInput): Promise<{ object: 'event'; event: string }> {
  const name = checkEventName(input.event, 'event');
  const who = contactOf(input);
  const event: RunEvent = { name, payload: await checkPayload(ctx, project, name, input.payload) };
  await ctx.writer.transaction(async (tx) => {
    const now = ctx.clock.now();
    let contact = 'id' in who ? await findContactById(tx, project, who.id) : await findContactByEmail(tx, project, who.email);
    if (!contact && 'id' in who) throw notFound('Contact');
    const automations = await findTriggered(tx, project, name);
    if (!contact && automations.length > 0) contact = await ensureContact(ctx, tx, project, (who as { email: string }).email);
    if (!contact) return;
    for (const automation of automations) {
      await startRun(ctx, tx, automation, await graphOf(tx, automation.version_id), contact, event, now);
    }
    const waits = await runs.findWaitingSteps(tx, name, contact.id);
    if (waits.length === 0) return;
    const scope = await contactScope(tx, contact);
    for (const wait of waits) await endWait(ctx, tx, wait, event, scope, now);
  });
  return { object: 'event', event: name };
}

const RUN_STATES = ['running', 'completed', 'failed', 'cancelled'];

/** GET /automations/:id/runs, with `status` one state or several joined by commas. */
export async function listRuns(ctx: Context, project: string, automationId: string, page: PageRequest, status: string | undefined) {
  const automation = await findAutomationOrThrow(ctx, project, automationId);
  const statuses = status === undefined || status === '' ? undefined : status.split(',').map((s) => s.trim());
  const wrong = statuses?.find((s) => !RUN_STATES.includes(s));
  if (wrong !== undefined) throw invalidField('status', `must be one of ${RUN_STATES.join(', ')} (or several, joined by commas).`);
  return runs.listRuns(ctx.db, automation.id, page, statuses);
}

function toRunStep(row: runs.RunStepRow) {
  return {
    key: row.key,
    type: row.type,
    status: row.status,
    started_at: row.started_at,
    completed_at: row.completed_at,
    output: parsed<Record<string, unknown>>(row.output),
    error: parsed<Record<string, unknown>>(row.error),
    created_at: row.created_at,
  };
}

/** The run of the project's automation, or 404. */
async function findRunOrThrow(ctx: Context, project: string, automationId: string, runId: string): Promise<runs.RunRow> {
  const automation = await findAutomationOrThrow(ctx, project, automationId);
  const run = isUuid(runId) ? await runs.findRun(ctx.db, automation.id, runId.toLowerCase()) : undefined;
  if (!run) throw notFound('Automation run');
  return run;
}

/** GET /automations/:id/runs/:run_id: the run and the steps it reached, in that order. */
export async function getRun(ctx: Context, project: string, automationId: string, runId: string) {
  const run = await findRunOrThrow(ctx, project, automationId, runId);
  const steps = await runs.listRunSteps(ctx.db, run.id);
  return {
    object: 'automation_run' as const,
    id: run.id,
    automation_id: run.automation_id,
    contact_id: run.contact_id,
    email: run.email,
    status: run.status,
    event: parsed<RunEvent>(run.event)!,
    started_at: run.started_at,
    completed_at: run.completed_at,
    created_at: run.created_at,
    steps: steps.map(toRunStep),
  };
}

/** A step of a run in Resend's `automation_run_step` shape: its id, and the config of its step in the run's version. */
function toRunStepObject(row: runs.RunStepRow, graph: Graph) {
  const { key, ...rest } = toRunStep(row);
  const step = graph.steps.find((s) => s.key === key);
  return { object: 'automation_run_step' as const, step_id: row.id, key, config: step?.config ?? null, ...rest };
}

/** GET /automations/:id/runs/:run_id/steps: newest first, always paginated. */
export async function listRunSteps(ctx: Context, project: string, automationId: string, runId: string, page: PageRequest) {
  const run = await findRunOrThrow(ctx, project, automationId, runId);
  const graph = await graphOf(ctx.db, run.version_id);
  return mapPage(await runs.pageRunSteps(ctx.db, run.id, page), (row) => toRunStepObject(row, graph));
}

/** GET /automations/:id/runs/:run_id/steps/:step_id. */
export async function getRunStep(ctx: Context, project: string, automationId: string, runId: string, stepId: string) {
  const run = await findRunOrThrow(ctx, project, automationId, runId);
  const row = isUuid(stepId) ? await runs.findRunStep(ctx.db, run.id, stepId.toLowerCase()) : undefined;
  if (!row) throw notFound('Automation run step');
  return toRunStepObject(row, await graphOf(ctx.db, run.version_id));
}
