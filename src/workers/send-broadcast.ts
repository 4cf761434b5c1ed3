import { toTimestamp } from '../clock.ts';
import type { Context } from '../context.ts';
import { domainOf, parseMailbox } from '../domain/addresses.ts';
import { loadParsedBroadcast, renderSubject, usedPropertyKeys, type ParsedBroadcast, type Personalization } from '../domain/broadcast-render.ts';
import { sendJobKey, SEND_EMAIL_TASK } from '../domain/emails.ts';
import { newJob } from '../domain/jobs.ts';
import type { Value } from '../domain/render-template.ts';
import { newId } from '../ids.ts';
import * as broadcasts from '../store/broadcasts.ts';
import { findPropertiesByKeys } from '../store/contact-properties.ts';
import { insertTables, type Rows } from '../store/insert-rows.ts';
import { completeJob, renewJobLock, type JobRow } from '../store/jobs.ts';
import type { EmailRecipientTable, EmailTable } from '../store/schema.ts';
import { findTopic } from '../store/topics.ts';

/**
 * Recipients per transaction (each writes an email, its recipient row and its send job). Small enough
 * that most of a chunk's rows and queries die young in V8's new space: with 2,000, survivors promoted to
 * the old space piled up and the heap grew with the segment (71 MB at 20,000 contacts, 156 MB at
 * 100,000); with 500 the fan-out is no slower on SQLite, and 200 made it twice as slow on PostgreSQL.
 */
export const CHUNK_RECIPIENTS = 500;

/**
 * In one transaction: fixes who receives the broadcast (the snapshot), the fallbacks of the contact
 * properties it uses, and its status `sending`. False when the job is no longer this worker's, or the
 * broadcast is no longer due (canceled meanwhile): then nothing is written.
 */
async function startFanOut(ctx: Context, job: JobRow, broadcast: broadcasts.BroadcastRow): Promise<boolean> {
  const properties = await findPropertiesByKeys(ctx.db, usedPropertyKeys(broadcast));
  const fallbacks = Object.fromEntries(properties.filter((p) => p.fallback_value !== null).map((p) => [p.key, JSON.parse(p.fallback_value!)]));
  // A topic deleted since the send was accepted: nobody has opted in to it any more.
  const gone = { id: broadcast.topic_id!, default_subscription: 'opt_out' as const };
  const topic = broadcast.topic_id === null ? undefined : ((await findTopic(ctx.db, broadcast.topic_id)) ?? gone);
  return ctx.writer.transaction(async (tx) => {
    if (!(await renewJobLock(tx, job.id, job.locked_by!, ctx.clock.now()))) return false;
    const changes = { status: 'sending' as const, property_fallbacks: JSON.stringify(fallbacks), fanout_cursor: null };
    if (!(await broadcasts.updateBroadcastIn(tx, broadcast.id, ['queued', 'scheduled'], changes))) {
      await completeJob(tx, job.id);
      return false;
    }
    await broadcasts.snapshotRecipients(tx, broadcast.id, broadcast.segment_id, topic);
    return true;
  });
}

type Recipient = Awaited<ReturnType<typeof broadcasts.readRecipients>>[number];

/** Each recipient's values of the properties the broadcast uses, by contact id. */
async function propertiesOf(ctx: Context, parsed: ParsedBroadcast, recipients: Recipient[]): Promise<Map<string, Record<string, Value>>> {
  const values = await broadcasts.findPropertyValuesOf(ctx.db, recipients.map((r) => r.contact_id), parsed.propertyKeys);
  const byContact = new Map<string, Record<string, Value>>();
  for (const { contact_id, key, value } of values) {
    const properties = byContact.get(contact_id) ?? {};
    properties[key] = JSON.parse(value) as Value;
    byContact.set(contact_id, properties);
  }
  return byContact;
}

/**
 * The rows of one chunk: per recipient an email (its subject rendered, its body left to be rendered
 * from the broadcast and the recipient's data), its recipient row and its send job.
 */
async function chunkRows(ctx: Context, row: broadcasts.BroadcastRow, parsed: ParsedBroadcast, chunk: Recipient[]): Promise<Rows> {
  const recipients = chunk.filter((r) => r.email !== null); // contacts deleted since the snapshot are skipped
  const properties = await propertiesOf(ctx, parsed, recipients);
  const now = ctx.clock.now();
  const at = toTimestamp(now);
  const domain = domainOf(parseMailbox(row.from, 'from').address);
  const emails: EmailTable[] = [];
  const emailRecipients: EmailRecipientTable[] = [];
  const jobs: JobRow[] = [];
  for (const recipient of recipients) {
    const id = newId();
    const data: Personalization = {
      contact_id: recipient.contact_id,
      email: recipient.email!,
      first_name: recipient.first_name,
      last_name: recipient.last_name,
      properties: properties.get(recipient.contact_id) ?? {},
    };
    emails.push({
      id,
      from: row.from,
      to: JSON.stringify([data.email]),
      cc: '[]',
      bcc: '[]',
      reply_to: row.reply_to ?? '[]',
      subject: renderSubject(ctx, parsed, data),
      headers: null,
      tags: null,
      message_id: `<${id}@${domain}>`,
      scheduled_at: null,
      last_event: 'queued',
      created_at: at,
      template_id: null,
      topic_id: row.topic_id,
      broadcast_id: row.id,
      personalization: JSON.stringify(data),
    });
    emailRecipients.push({ email_id: id, address: data.email, status: 'queued' });
    jobs.push(newJob(ctx, SEND_EMAIL_TASK, sendJobKey(id), { email_id: id }, now));
  }
  return { emails, email_recipients: emailRecipients, jobs };
}

/**
 * Writes one chunk and moves the cursor past it in one transaction, renewing the job's lock in it:
 * false (and nothing written) when another worker has taken the job over. The last chunk also marks
 * the broadcast sent, drops its snapshot and ends the job.
 */
async function writeChunk(ctx: Context, job: JobRow, broadcastId: string, rows: Rows, cursor: string | null, last: boolean): Promise<boolean> {
  const at = toTimestamp(ctx.clock.now());
  return ctx.writer.transaction(async (tx) => {
    if (!(await renewJobLock(tx, job.id, job.locked_by!, ctx.clock.now()))) return false;
    await insertTables(tx, rows);
    const progress = last ? { fanout_cursor: cursor, status: 'sent' as const, sent_at: at } : { fanout_cursor: cursor };
    await broadcasts.updateBroadcastIn(tx, broadcastId, ['sending'], progress);
    if (last) {
      await broadcasts.deleteRecipients(tx, broadcastId);
      await completeJob(tx, job.id);
    }
    return true;
  });
}

/**
 * The fan-out of a broadcast: snapshot its recipients, then walk the snapshot in contact-id order,
 * CHUNK_RECIPIENTS at a time, writing each chunk's emails and send jobs with the cursor that says how
 * far it got. A run that crashes resumes after the last committed chunk, so no contact is skipped or
 * sent to twice; memory holds one chunk, whatever the segment's size. The normal delivery path sends
 * the emails, starting while the fan-out goes on.
 */
export async function sendBroadcastTask(ctx: Context, job: JobRow): Promise<void> {
  const { broadcast_id: broadcastId } = JSON.parse(job.payload) as { broadcast_id: string };
  let row = await broadcasts.findBroadcast(ctx.db, broadcastId);
  if (!row || !['queued', 'scheduled', 'sending'].includes(row.status)) return completeJob(ctx.db, job.id);
  if (row.status !== 'sending') {
    if (!(await startFanOut(ctx, job, row))) return;
    row = (await broadcasts.findBroadcast(ctx.db, broadcastId))!;
  }
  const parsed = (await loadParsedBroadcast(ctx, broadcastId))!;
  let cursor = row.fanout_cursor;
  for (;;) {
    const recipients = await broadcasts.readRecipients(ctx.db, broadcastId, cursor, CHUNK_RECIPIENTS);
    const last = recipients.length < CHUNK_RECIPIENTS;
    const next = recipients.at(-1)?.contact_id ?? cursor;
    const rows = await chunkRows(ctx, row, parsed, recipients);
    if (!(await writeChunk(ctx, job, broadcastId, rows, next, last))) return;
    ctx.jobsAdded.notify();
    if (last) return;
    cursor = next;
  }
}
