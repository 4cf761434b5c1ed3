import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { newId } from '../../time/ids.ts';
import type { JobRow } from '../../jobs/enqueue.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import * as broadcasts from '../../store/broadcasts.ts';
import { findPropertiesByKeys } from '../../store/contact-properties.ts';
import type { Tx } from '../../store/db.ts';
import { emailRows, type EmailRows } from '../../store/emails.ts';
import { insertTables, type Rows } from '../../store/insert-rows.ts';
import { findTopic } from '../../store/topics.ts';
import { sendJob } from '../emails/emails.ts';
import { newEmailRows, type NewEmail } from '../emails/new-email.ts';
import { domainOf, parseMailbox } from '../recipients/addresses.ts';
import { eligibleRecipients } from '../recipients/policy.ts';
import type { Value } from '../templates/render-template.ts';
import type { ProjectRow } from '../../store/projects.ts';
import { hasQuota, takeUpTo } from '../projects/quotas.ts';
import { loadParsedBroadcast, renderSubject, usedPropertyKeys, type ParsedBroadcast, type Personalization } from './broadcast-render.ts';

/**
 * Recipients per transaction (each writes an email, its recipient row and its send job), for the cost of
 * a commit: 500 is no slower than 2,000 on SQLite, and 200 made the fan-out twice as slow on PostgreSQL.
 */
export const CHUNK_RECIPIENTS = 500;

/**
 * Recipients whose rows are made and inserted together, within a chunk's transaction: the rows, and the
 * value lists Kysely makes of them, then live through about 1 MB of allocation instead of a chunk's 5 MB.
 * At each young collection V8 counts how many of the objects each object literal made are still alive,
 * and allocates the objects of a literal whose objects mostly survive straight into the old generation
 * (allocation-site pretenuring), where only a full collection frees them. A whole chunk's rows lived
 * through the building and running of all its INSERTs, so V8 often found them alive and took them for
 * long-lived: in about half the processes every later row (or value list) then went to the old
 * generation, and the heap grew with the segment, by 100 to 145 MB at 200,000 contacts, until V8's
 * old-generation limit forced a full collection.
 */
const STATEMENT_RECIPIENTS = 100;

/**
 * In one checkpoint: fixes who receives the broadcast (the snapshot), the fallbacks of the contact
 * properties it uses, and its status `sending`. False when the job is no longer this worker's, or the
 * broadcast is no longer due (canceled meanwhile): then nothing is written.
 */
async function startFanOut(ctx: Context, attempt: Attempt<'send-broadcast'>, broadcast: broadcasts.BroadcastRow): Promise<boolean> {
  const project = broadcast.project_id;
  const properties = await findPropertiesByKeys(ctx.db, project, usedPropertyKeys(broadcast));
  const fallbacks = Object.fromEntries(properties.filter((p) => p.fallback_value !== null).map((p) => [p.key, p.fallback_value!]));
  // A topic deleted since the send was accepted: nobody has opted in to it any more.
  const gone = { id: broadcast.topic_id!, default_subscription: 'opt_out' as const };
  const topic = broadcast.topic_id === null ? undefined : ((await findTopic(ctx.db, project, broadcast.topic_id)) ?? gone);
  let started = false;
  const held = await attempt.checkpoint(async (tx) => {
    const changes = { status: 'sending' as const, property_fallbacks: fallbacks, fanout_cursor: null };
    started = await broadcasts.updateBroadcastIn(tx, project, broadcast.id, ['queued', 'scheduled'], changes);
    if (started) await broadcasts.snapshotRecipients(tx, eligibleRecipients(tx, project, broadcast.id, broadcast.segment_id, topic));
  });
  return held && started;
}

type Recipient = Awaited<ReturnType<typeof broadcasts.readRecipients>>[number];

/** A chunk of the snapshot: its recipients, and their values of the properties the broadcast uses. */
interface Chunk {
  recipients: Recipient[];
  properties: Map<string, Record<string, Value>>;
}

/** The chunk after `cursor`. A contact deleted since the snapshot is in it with a null email. */
async function readChunk(ctx: Context, project: string, parsed: ParsedBroadcast, cursor: string | null): Promise<Chunk> {
  const recipients = await broadcasts.readRecipients(ctx.db, parsed.id, cursor, CHUNK_RECIPIENTS);
  const ids = recipients.filter((r) => r.email !== null).map((r) => r.contact_id);
  const properties = new Map<string, Record<string, Value>>();
  for (const { contact_id, key, value } of await broadcasts.findPropertyValuesOf(ctx.db, project, ids, parsed.propertyKeys)) {
    const values = properties.get(contact_id) ?? {};
    values[key] = value;
    properties.set(contact_id, values);
  }
  return { recipients, properties };
}

/** What every email of a chunk shares: the time it was made, the sender's domain, the reply-to addresses. */
interface Stamp {
  now: number;
  domain: string;
  replyTo: string[];
}

/**
 * The rows of some of a chunk's recipients: per recipient an email (its subject rendered, its body left
 * to be rendered from the broadcast and the recipient's data), its recipient row and its send job.
 */
function recipientRows(ctx: Context, row: broadcasts.BroadcastRow, parsed: ParsedBroadcast, chunk: Chunk, from: number, to: number, stamp: Stamp): Rows {
  // Contacts deleted since the snapshot are skipped.
  const recipients = chunk.recipients.slice(from, to).filter((r) => r.email !== null);
  const { now, domain, replyTo } = stamp;
  const at = toTimestamp(now);
  const written: EmailRows[] = [];
  const jobs: JobRow[] = [];
  for (const recipient of recipients) {
    const id = newId();
    const data: Personalization = {
      contact_id: recipient.contact_id,
      email: recipient.email!,
      first_name: recipient.first_name,
      last_name: recipient.last_name,
      properties: chunk.properties.get(recipient.contact_id) ?? {},
    };
    const email: NewEmail = {
      projectId: row.project_id,
      id,
      from: row.from,
      fromDomain: domain,
      to: [data.email],
      cc: [],
      bcc: [],
      replyTo,
      envelope: [data.email],
      subject: renderSubject(ctx, parsed, data),
      html: null,
      text: null,
      headers: null,
      tags: null,
      scheduledAt: null,
      templateId: null,
      topicId: row.topic_id,
      broadcastId: row.id,
      personalization: data,
      events: [],
    };
    written.push({ ...newEmailRows(email, at), attachments: [] });
    jobs.push(sendJob(ctx, id, now));
  }
  return { ...emailRows(written), jobs };
}

/** A fan-out stopped by its project's quota: when the quota starts over. */
interface QuotaHold {
  until?: number;
}

/**
 * The part of a chunk its project's quota lets go now (projects/quotas.ts), taken in the chunk's
 * transaction: all of it, or its recipients up to the last the quota allows, and `hold` set.
 */
async function withinQuota(ctx: Context, tx: Tx, project: ProjectRow | undefined, chunk: Chunk, hold: QuotaHold): Promise<Chunk> {
  hold.until = undefined;
  if (!hasQuota(project)) return chunk;
  const live = chunk.recipients.filter((r) => r.email !== null).length;
  const { granted, resetsAt } = await takeUpTo(ctx, tx, project, live);
  if (granted === live) return chunk;
  hold.until = resetsAt;
  let [kept, cut] = [0, 0];
  for (; cut < chunk.recipients.length && (chunk.recipients[cut]!.email === null || kept < granted); cut++) if (chunk.recipients[cut]!.email !== null) kept++;
  return { ...chunk, recipients: chunk.recipients.slice(0, cut) };
}

/**
 * What writes one chunk (what the project's quota lets go of it) and moves the cursor past it, in one
 * transaction; the last chunk also marks the broadcast sent and drops its snapshot. The rows are made
 * in the transaction, STATEMENT_RECIPIENTS at a time, each batch just before it is inserted; making
 * them writes nothing elsewhere, so the transaction may be re-run.
 */
function chunkWrite(
  ctx: Context,
  row: broadcasts.BroadcastRow,
  parsed: ParsedBroadcast,
  whole: Chunk,
  from: string | null,
  last: boolean,
  project: ProjectRow | undefined,
  hold: QuotaHold,
): (tx: Tx) => Promise<void> {
  const replyTo = row.reply_to ?? [];
  const stamp: Stamp = { now: ctx.clock.now(), domain: domainOf(parseMailbox(row.from, 'from').address), replyTo };
  const at = toTimestamp(stamp.now);
  return async (tx) => {
    const chunk = await withinQuota(ctx, tx, project, whole, hold);
    for (let i = 0; i < chunk.recipients.length; i += STATEMENT_RECIPIENTS) {
      await insertTables(tx, recipientRows(ctx, row, parsed, chunk, i, i + STATEMENT_RECIPIENTS, stamp));
    }
    const cursor = chunk.recipients.at(-1)?.contact_id ?? from;
    const finished = last && hold.until === undefined;
    const progress = finished ? { fanout_cursor: cursor, status: 'sent' as const, sent_at: at } : { fanout_cursor: cursor };
    await broadcasts.updateBroadcastIn(tx, row.project_id, row.id, ['sending'], progress);
    if (finished) await broadcasts.deleteRecipients(tx, row.id);
  };
}

/**
 * The `send-broadcast` task, the fan-out of a broadcast: snapshot its recipients, then walk the snapshot
 * in contact-id order, CHUNK_RECIPIENTS at a time, each chunk's emails and send jobs a checkpoint with
 * the cursor that says how far it got, the last one written with the job's end. A run that crashes
 * resumes after the last committed chunk, so no contact is skipped or sent to twice; memory holds one
 * chunk, whatever the segment's size. The normal delivery path sends the emails, starting while the
 * fan-out goes on. A canceled broadcast's job is removed (broadcasts.ts): the next checkpoint stops it.
 */
export async function fanOut(ctx: Context, attempt: Attempt<'send-broadcast'>): Promise<TaskResult> {
  const { broadcast_id: broadcastId } = attempt.payload;
  let row = await broadcasts.findBroadcastById(ctx.db, broadcastId);
  if (!row || !['queued', 'scheduled', 'sending'].includes(row.status)) return done();
  const project = row.project_id;
  if (row.status !== 'sending') {
    if (!(await startFanOut(ctx, attempt, row))) return done();
    row = (await broadcasts.findBroadcast(ctx.db, project, broadcastId))!;
  }
  const parsed = (await loadParsedBroadcast(ctx, project, broadcastId))!;
  const limits = await ctx.projects.find(project);
  const hold: QuotaHold = {};
  let cursor = row.fanout_cursor;
  for (;;) {
    const chunk = await readChunk(ctx, project, parsed, cursor);
    const last = chunk.recipients.length < CHUNK_RECIPIENTS;
    const write = chunkWrite(ctx, row, parsed, chunk, cursor, last, limits, hold);
    // Under a quota the last chunk may be held too: it is a checkpoint of its own.
    if (last && !hasQuota(limits)) return done(write);
    if (!(await attempt.checkpoint(write))) return done();
    // The rest waits for the quota to start over, from the cursor the chunk left.
    if (hold.until !== undefined) return { ending: { end: 'postpone', until: hold.until } };
    if (last) return done();
    cursor = chunk.recipients.at(-1)?.contact_id ?? cursor;
  }
}
