import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, invalidField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import * as store from '../../store/broadcasts.ts';
import type { Tx } from '../../store/db.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import type { BroadcastStatus } from '../../store/schema.ts';
import { checkContent, checkNewContent, checkSendable, type BroadcastInput, type CreateBroadcastInput } from './broadcast-input.ts';
import { enqueue, jobKey, remove } from '../../jobs/enqueue.ts';
import { parseScheduledAt } from '../emails/schedule.ts';
import { domainOf, parseMailbox } from '../recipients/addresses.ts';
import { pauseOf } from '../sending-domains/domains.ts';

// The life of a broadcast: draft -> (send) queued, or scheduled -> (the worker) sending -> sent;
// cancel takes a scheduled one back to draft and a queued one to canceled. Every transition is one
// conditional UPDATE on the status, so that two requests (or a request and the worker) never both win.

export const fanOutJobKey = (broadcastId: string) => jobKey('send-broadcast', broadcastId);

const ALL: BroadcastStatus[] = ['draft', 'scheduled', 'queued', 'sending', 'sent', 'canceled'];

/** Broadcasts answer state conflicts with 403 validation_error, as Resend does for cancel. */
const wrongState = (message: string) => new AppError('forbidden', message);

async function findOrThrow(ctx: Context, project: string, id: string): Promise<store.BroadcastRow> {
  const row = await store.findBroadcast(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('Broadcast');
  return row;
}

/** When a send is due: now, or at `scheduled_at` (read as for emails). */
function sendTime(ctx: Context, scheduledAt: string | undefined): { status: BroadcastStatus; runAt: number; scheduled_at: string | null } {
  const now = ctx.clock.now();
  if (scheduledAt === undefined) return { status: 'queued', runAt: now, scheduled_at: null };
  const runAt = parseScheduledAt(scheduledAt, now);
  return { status: 'scheduled', runAt, scheduled_at: toTimestamp(runAt) };
}

/** The fan-out's job, written in the transaction of the transition that makes the broadcast due. */
async function addFanOutJob(ctx: Context, tx: Tx, id: string, runAt: number): Promise<void> {
  await enqueue(ctx, tx, 'send-broadcast', { broadcast_id: id }, { key: fanOutJobKey(id), runAt });
}

/** POST /broadcasts: a draft, or with `send: true` a broadcast due now or at `scheduled_at`. */
export async function createBroadcast(ctx: Context, project: string, input: CreateBroadcastInput): Promise<{ id: string }> {
  if (input.scheduled_at !== undefined && input.send !== true) {
    throw invalidField('scheduled_at', 'can only be used together with `send: true`.');
  }
  const content = await checkNewContent(ctx, project, input);
  if (input.send) await checkSendable(ctx, project, content);
  const due = input.send ? sendTime(ctx, input.scheduled_at) : undefined;
  const row: store.BroadcastRow = {
    id: newId(),
    project_id: project,
    ...content,
    status: due?.status ?? 'draft',
    created_at: toTimestamp(ctx.clock.now()),
    scheduled_at: due?.scheduled_at ?? null,
    sent_at: null,
    property_fallbacks: null,
    fanout_cursor: null,
  };
  await ctx.writer.transaction(async (tx) => {
    await store.insertBroadcast(tx, row);
    if (due) await addFanOutJob(ctx, tx, row.id, due.runAt);
  });
  return { id: row.id };
}

/** Resend's broadcast object; `audience_id` is the legacy name of `segment_id`. */
export async function getBroadcast(ctx: Context, project: string, id: string) {
  const { property_fallbacks: _, fanout_cursor: __, project_id: ___, ...row } = await findOrThrow(ctx, project, id);
  const held = await heldEmails(ctx, row);
  return { object: 'broadcast' as const, ...row, audience_id: row.segment_id, ...(held ? { sending_paused: held } : {}) };
}

/**
 * Mailroom's, shown only then (Resend's object is otherwise unchanged): while the guards pause the
 * broadcast's domain, why, since when, and how many of its emails wait (they go once it is resumed).
 */
async function heldEmails(ctx: Context, row: { id: string; from: string; status: BroadcastStatus }) {
  if (row.status !== 'sending' && row.status !== 'sent') return null;
  const domain = await ctx.domains.find(domainOf(parseMailbox(row.from, 'from').address));
  const pause = domain ? pauseOf(domain) : null;
  return pause && { ...pause, waiting: await store.countQueuedEmails(ctx.db, row.id) };
}

/** GET /broadcasts: list rows without the content. */
export async function listBroadcasts(ctx: Context, project: string, page: PageRequest) {
  const result = await store.listBroadcasts(ctx.db, project, page);
  return mapPage(result, (row) => ({ ...row, audience_id: row.segment_id }));
}

/** PATCH /broadcasts/:id: a draft changes freely; after that only its `name` can change. */
export async function updateBroadcast(ctx: Context, project: string, id: string, input: BroadcastInput): Promise<{ id: string }> {
  const current = await findOrThrow(ctx, project, id);
  const changes = await checkContent(ctx, project, input);
  if ((changes.html ?? current.html) === null && (changes.text === undefined ? current.text : changes.text) === null) {
    throw invalidField('text', 'a broadcast needs `html` or `text`; it would have neither.');
  }
  const onlyName = Object.keys(changes).every((field) => field === 'name');
  if (Object.keys(changes).length > 0 && !(await store.updateBroadcastIn(ctx.db, project, current.id, onlyName ? ALL : ['draft'], changes))) {
    throw wrongState('Only draft broadcasts can be edited; once a broadcast is sent or scheduled, only its `name` can change.');
  }
  return { id: current.id };
}

/** DELETE /broadcasts/:id: drafts, and scheduled broadcasts with their pending send. */
export async function deleteBroadcast(ctx: Context, project: string, id: string): Promise<{ id: string }> {
  const current = await findOrThrow(ctx, project, id);
  const deleted = await ctx.writer.transaction(async (tx) => {
    if (!(await store.deleteBroadcastIn(tx, project, current.id, ['draft', 'scheduled']))) return false;
    await remove(tx, [fanOutJobKey(current.id)]);
    return true;
  });
  if (!deleted) throw wrongState('Only draft or scheduled broadcasts can be deleted.');
  return { id: current.id };
}

/** POST /broadcasts/:id/send: a draft becomes due now, or at `scheduled_at`. */
export async function sendBroadcast(ctx: Context, project: string, id: string, scheduledAt: string | undefined): Promise<{ id: string }> {
  const current = await findOrThrow(ctx, project, id);
  await checkSendable(ctx, project, current);
  const due = sendTime(ctx, scheduledAt);
  const sent = await ctx.writer.transaction(async (tx) => {
    const changes = { status: due.status, scheduled_at: due.scheduled_at };
    if (!(await store.updateBroadcastIn(tx, project, current.id, ['draft'], changes))) return false;
    await addFanOutJob(ctx, tx, current.id, due.runAt);
    return true;
  });
  if (!sent) throw wrongState('Only draft broadcasts can be sent; this one has been sent or scheduled already.');
  return { id: current.id };
}

/**
 * POST /broadcasts/:id/cancel: a scheduled broadcast goes back to draft, a queued one is canceled for
 * good. Its fan-out job goes too; a worker that has just claimed it sees the status and stops.
 */
export async function cancelBroadcast(ctx: Context, project: string, id: string): Promise<{ id: string }> {
  const current = await findOrThrow(ctx, project, id);
  const canceled = await ctx.writer.transaction(async (tx) => {
    const unscheduled = await store.updateBroadcastIn(tx, project, current.id, ['scheduled'], { status: 'draft', scheduled_at: null });
    if (!unscheduled && !(await store.updateBroadcastIn(tx, project, current.id, ['queued'], { status: 'canceled' }))) return false;
    await remove(tx, [fanOutJobKey(current.id)]);
    return true;
  });
  if (!canceled) throw wrongState('Only queued or scheduled broadcasts can be canceled');
  return { id: current.id };
}

/** POST /broadcasts/:id/duplicate: a new draft with the same content, whatever the original's status. */
export async function duplicateBroadcast(ctx: Context, project: string, id: string): Promise<{ id: string }> {
  const source = await findOrThrow(ctx, project, id);
  const row: store.BroadcastRow = {
    ...source,
    id: newId(),
    name: source.name === null ? null : `${source.name} (copy)`,
    status: 'draft',
    created_at: toTimestamp(ctx.clock.now()),
    scheduled_at: null,
    sent_at: null,
    property_fallbacks: null,
    fanout_cursor: null,
  };
  await store.insertBroadcast(ctx.db, row);
  return { id: row.id };
}
