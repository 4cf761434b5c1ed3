// How a run moves: each step it reaches is a row and, unless it waits for an event with no timeout, a
// job in the outbox (due now, or when its delay or timeout ends). A step's job runs it in one
// transaction with everything it does (an email and its send job, a contact's change, the next steps'
// rows and jobs), so a crash repeats a step whole or not at all.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, clip } from '../../errors.ts';
import { parseDuration } from '../../time/durations.ts';
import { newId } from '../../time/ids.ts';
import * as runs from '../../store/automation-runs.ts';
import { findVersion } from '../../store/automations.ts';
import { findContactById, findPropertyValues, type ContactRow } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { insertTables } from '../../store/insert-rows.ts';
import { json, parsed } from '../../store/json.ts';
import { addMemberships, findSegment } from '../../store/segments.ts';
import { checkContactChanges, removeContact, writeContactChanges, type ContactChanges } from '../contacts/contacts.ts';
import { emailTables } from '../emails/emails.ts';
import { prepareEmail, type PreparedEmail, type SendEmailInput } from '../emails/email-input.ts';
import { enqueue, jobKey, remove } from '../../jobs/enqueue.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import { marketingPause } from '../deliverability/guards.ts';
import { hasQuota, quotaSpentUntil, takeQuota } from '../projects/quotas.ts';
import { domainOf, parseMailbox } from '../recipients/addresses.ts';
import { refusedToContact } from '../recipients/policy.ts';
import type { ConnectionType, ContactUpdateConfig, Graph, SendEmailConfig, Step, StepType } from './graph.ts';
import { senderOf } from '../sending-domains/sender-domain.ts';
import { evaluate, fieldValue, textOf, type RuleScope } from './rules.ts';

/** The key of a step's job: how a stop or an event that ends a wait finds it. */
export const stepJobKey = (stepId: string) => jobKey('automation-step', stepId);

/** The event a run started with. */
export interface RunEvent {
  name: string;
  payload: Record<string, unknown>;
}

// Versions never change: their graphs are read once per process.
const graphs = new Map<string, Graph>();
const GRAPHS_KEPT = 1000;

export async function graphOf(db: Tx | Context['db'], versionId: string): Promise<Graph> {
  const cached = graphs.get(versionId);
  if (cached) return cached;
  const row = await findVersion(db, versionId);
  if (!row) throw new Error(`automation version ${versionId} not found`);
  const graph = { steps: JSON.parse(row.steps) as Step[], connections: JSON.parse(row.connections) as Graph['connections'] };
  if (graphs.size >= GRAPHS_KEPT) graphs.delete(graphs.keys().next().value!);
  graphs.set(versionId, graph);
  return graph;
}

/** A contact as rules and variables read it: its fields, and its properties by key. */
export async function contactScope(db: Context['db'], contact: ContactRow | undefined): Promise<Record<string, unknown> | undefined> {
  if (!contact) return undefined;
  const properties = Object.fromEntries((await findPropertyValues(db, contact.id)).map((p) => [p.key, p.value]));
  return { ...properties, id: contact.id, email: contact.email, first_name: contact.first_name, last_name: contact.last_name, unsubscribed: contact.unsubscribed === 1 };
}

/** Opens the steps that `steps` are in `tx`: their rows (inserted with `ended`), and their jobs, due when each should run. */
async function openSteps(ctx: Context, tx: Tx, run: runs.RunRow, steps: Step[], now: number, ended: runs.RunStepRow[]): Promise<void> {
  const at = toTimestamp(now);
  const rows = steps.map((step): runs.RunStepRow => {
    const holds = step.type === 'delay' || step.type === 'wait_for_event';
    return {
      id: newId(),
      run_id: run.id,
      key: step.key,
      type: step.type,
      status: holds ? 'waiting' : 'pending',
      output: null,
      error: null,
      wait_event: step.type === 'wait_for_event' ? step.config.event_name : null,
      contact_id: run.contact_id,
      started_at: holds ? at : null,
      completed_at: null,
      created_at: at,
    };
  });
  await runs.insertSteps(tx, [...ended, ...rows]);
  for (const [i, step] of steps.entries()) {
    const hold = step.type === 'delay' ? step.config.duration : step.type === 'wait_for_event' ? step.config.timeout : undefined;
    // A wait without a timeout has no job: only its event ends it.
    if (step.type === 'wait_for_event' && hold === undefined) continue;
    const runAt = hold === undefined ? now : now + parseDuration(hold)!;
    await enqueue(ctx, tx, 'automation-step', { step_id: rows[i]!.id }, { key: stepJobKey(rows[i]!.id), runAt });
  }
}

/**
 * Follows the connections of type `branch` out of step `from`: opens the steps they lead to, or, when
 * none is left open in the run, completes it. `ended`: rows of steps already ended (a run's trigger),
 * inserted with the new ones.
 */
export async function advance(ctx: Context, tx: Tx, run: runs.RunRow, graph: Graph, from: string, branch: ConnectionType, now: number, ended: runs.RunStepRow[] = []): Promise<void> {
  const next = graph.connections.filter((c) => c.from === from && c.type === branch).map((c) => graph.steps.find((s) => s.key === c.to)!);
  await openSteps(ctx, tx, run, next, now, ended);
  if (next.length === 0) await runs.completeRunIfDone(tx, run.id, toTimestamp(now));
}

/** What a step came to: its status, what it recorded, and the connections to follow (none when it failed). */
interface Outcome {
  status: 'completed' | 'skipped' | 'failed';
  output?: Record<string, unknown>;
  error?: { name: string; message: string };
  branch?: ConnectionType;
  /** The writes that go with it, in the step's transaction. */
  write?: (tx: Tx) => Promise<void>;
  /** Not run yet: the step waits until then, its attempt given back (the guards pause its domain). */
  postponeUntil?: number;
}

const failed = (error: unknown): Outcome => ({
  status: 'failed',
  error: error instanceof AppError ? { name: error.toBody().name, message: error.message } : { name: 'internal_error', message: String(error) },
});

/** A variable's value: a literal as it is, `{var}` read from the event and the contact. */
function resolve(value: unknown, scope: RuleScope): unknown {
  if (typeof value === 'object' && value !== null && 'var' in value) return fieldValue(scope, (value as { var: string }).var);
  return value;
}

function templateVariables(config: SendEmailConfig, scope: RuleScope): Record<string, string | number> {
  const variables: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(config.template.variables ?? {})) {
    const resolved = resolve(value, scope);
    // An absent value leaves the template's fallback to apply.
    if (resolved === undefined || resolved === null) continue;
    variables[name] = typeof resolved === 'number' || typeof resolved === 'string' ? resolved : textOf(resolved);
  }
  return variables;
}

/** Writes the email in the run's project: its template, topic and sending domain are that project's. */
async function sendEmailStep(ctx: Context, project: string, config: SendEmailConfig, contact: ContactRow | undefined, scope: RuleScope): Promise<Outcome> {
  if (!contact) return { status: 'skipped', output: { reason: 'Not sent: the contact was deleted.' } };
  const refusal = await refusedToContact(ctx, { project_id: contact.project_id, email: contact.email, unsubscribed: contact.unsubscribed === 1 }, config.topic_id);
  if (refusal) return { status: 'skipped', output: { reason: refusal.reason, state: refusal.state } };
  const input: SendEmailInput = {
    to: contact.email,
    from: config.from,
    subject: config.subject,
    reply_to: config.reply_to,
    topic_id: config.topic_id,
    template: { id: config.template.id, variables: templateVariables(config, scope) },
  };
  let prepared: PreparedEmail;
  try {
    prepared = await prepareEmail(ctx, input, senderOf(project));
  } catch (error) {
    if (error instanceof AppError) return failed(error);
    throw error;
  }
  // The guards pause the marketing mail of its domain: the step waits, and sends once resumed.
  const domain = await ctx.domains.find(domainOf(parseMailbox(prepared.email.from, 'from').address));
  if (domain && (await marketingPause(ctx, domain))) return { status: 'skipped', postponeUntil: ctx.clock.now() + ctx.config.guards.recheckMs };
  // Its project's quota counts it as a send's (projects/quotas.ts): spent, the step waits until it starts over.
  const counted = prepared.email.last_event !== 'failed' ? await ctx.projects.find(project) : undefined;
  const spentUntil = hasQuota(counted) ? await quotaSpentUntil(ctx, counted) : undefined;
  if (spentUntil !== undefined) return { status: 'skipped', postponeUntil: spentUntil };
  const rows = await emailTables(ctx, [prepared]);
  return {
    status: 'completed',
    output: { email_id: prepared.email.id },
    branch: 'default',
    write: async (tx) => {
      // Spent since the check: takeQuota throws, the transaction writes nothing, and the job is retried (jobs/attempt.ts).
      if (hasQuota(counted)) await takeQuota(ctx, tx, counted, 1);
      await insertTables(tx, rows);
    },
  };
}

async function contactUpdateStep(ctx: Context, project: string, config: ContactUpdateConfig, contact: ContactRow | undefined, scope: RuleScope): Promise<Outcome> {
  if (!contact) return { status: 'skipped', output: { reason: 'The contact was deleted.' }, branch: 'default' };
  const pick = (field: 'first_name' | 'last_name' | 'unsubscribed') => (config[field] === undefined ? undefined : resolve(config[field], scope));
  const properties = config.properties && Object.fromEntries(Object.entries(config.properties).map(([k, v]) => [k, resolve(v, scope) ?? null]));
  let changes: ContactChanges;
  try {
    const unsubscribed = pick('unsubscribed');
    changes = await checkContactChanges(ctx, project, {
      first_name: pick('first_name') as string | null | undefined,
      last_name: pick('last_name') as string | null | undefined,
      unsubscribed: unsubscribed === undefined ? undefined : unsubscribed === true || unsubscribed === 'true',
      properties: properties as Record<string, string | number | null> | undefined,
    });
  } catch (error) {
    if (error instanceof AppError) return failed(error);
    throw error;
  }
  return { status: 'completed', output: { contact_id: contact.id }, branch: 'default', write: (tx) => writeContactChanges(ctx, tx, contact, changes) };
}

/** What the step does, worked out before its transaction (reads, template rendering, checks). */
/** The steps that read the run's contact; of those, the ones that read its fields and properties as rules and variables do. */
const READS_CONTACT = new Set<StepType>(['send_email', 'condition', 'contact_update', 'contact_delete', 'add_to_segment']);
const READS_SCOPE = new Set<StepType>(['send_email', 'condition', 'contact_update']);

/** What `step` of `run` does; everything it reads and writes is the run's project's. */
async function work(ctx: Context, project: string, step: Step, run: runs.RunRow): Promise<Outcome> {
  // A delay or a wait's timeout reads nothing more.
  const contact = READS_CONTACT.has(step.type) ? await findContactById(ctx.db, project, run.contact_id) : undefined;
  const event = parsed<RunEvent>(run.event)!;
  const scope: RuleScope = { event: event.payload, contact: READS_SCOPE.has(step.type) ? await contactScope(ctx.db, contact) : undefined };
  switch (step.type) {
    case 'send_email':
      return sendEmailStep(ctx, project, step.config, contact, scope);
    case 'delay':
      return { status: 'completed', output: { duration: step.config.duration }, branch: 'default' };
    case 'wait_for_event':
      // Its job is its timeout: an event that ends the wait ends it elsewhere (runs.ts).
      return { status: 'completed', output: { timed_out: true }, branch: 'timeout' };
    case 'condition': {
      const met = evaluate(step.config, scope);
      return { status: 'completed', output: { result: met }, branch: met ? 'condition_met' : 'condition_not_met' };
    }
    case 'contact_update':
      return contactUpdateStep(ctx, project, step.config, contact, scope);
    case 'contact_delete':
      if (!contact) return { status: 'skipped', output: { reason: 'The contact was deleted already.' }, branch: 'default' };
      return { status: 'completed', output: { contact_id: contact.id }, branch: 'default', write: (tx) => removeContact(ctx, tx, contact) };
    case 'add_to_segment': {
      const segment = await findSegment(ctx.db, project, step.config.segment_id.toLowerCase());
      if (!segment) return failed(new AppError('not_found', `Segment ${clip(step.config.segment_id)} not found`));
      if (!contact) return { status: 'skipped', output: { reason: 'The contact was deleted.' }, branch: 'default' };
      return {
        status: 'completed',
        output: { segment_id: segment.id },
        branch: 'default',
        write: (tx) => addMemberships(tx, [{ segment_id: segment.id, contact_id: contact.id }]),
      };
    }
    case 'trigger':
      return { status: 'completed', branch: 'default' };
  }
}

/** Cancels open steps and deletes their jobs: a failed run's other branches, a stopped automation's runs. */
export async function cancelOpenSteps(tx: Tx, open: Pick<runs.RunStepRow, 'id'>[], at: string): Promise<void> {
  await runs.cancelSteps(tx, open.map((s) => s.id), at);
  await remove(tx, open.map((s) => stepJobKey(s.id)));
}

/**
 * Records an open step's outcome in `tx` with its writes, and moves the run on (or fails it); false,
 * writing nothing, when the step has ended already (then it must not run).
 */
export async function recordOutcome(ctx: Context, tx: Tx, run: runs.RunRow, graph: Graph, step: Pick<runs.RunStepRow, 'id' | 'key'>, outcome: Outcome, now: number): Promise<boolean> {
  const at = toTimestamp(now);
  const finished = { status: outcome.status, output: json(outcome.output ?? null), error: json(outcome.error ?? null), started_at: at, completed_at: at };
  if (!(await runs.finishStep(tx, step.id, finished))) return false;
  await outcome.write?.(tx);
  if (outcome.status === 'failed') {
    await runs.endRun(tx, run.id, 'failed', at);
    // The run's other branches stop with it.
    await cancelOpenSteps(tx, await runs.findOpenStepsOfRun(tx, run.id), at);
    return true;
  }
  await advance(ctx, tx, run, graph, step.key, outcome.branch ?? 'default', now);
  return true;
}

/** The `automation-step` task: runs one step of a run, unless the run or the step has ended meanwhile; its outcome is written with the job's end. */
export async function runStep(ctx: Context, attempt: Attempt<'automation-step'>): Promise<TaskResult> {
  const found = await runs.findStepWithRun(ctx.db, attempt.payload.step_id);
  if (!found || found.run.status !== 'running' || !runs.OPEN_STEP_STATES.includes(found.step.status)) return done();
  const { step: row, run, project } = found;
  const graph = await graphOf(ctx.db, run.version_id);
  const step = graph.steps.find((s) => s.key === row.key)!;
  const outcome = await work(ctx, project, step, run);
  if (outcome.postponeUntil !== undefined) return { ending: { end: 'postpone', until: outcome.postponeUntil } };
  return done(async (tx) => {
    const locked = await runs.lockRun(tx, run.id);
    if (locked?.status !== 'running') return;
    await recordOutcome(ctx, tx, run, graph, row, outcome, ctx.clock.now());
  });
}
