import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, notFound } from '../../errors.ts';
import type { SendEmailInput } from './email-input.ts';
import * as emails from '../../store/emails.ts';
import type { PageRequest } from '../../store/paginate.ts';
import { insertIdempotencyKey, type IdempotencyKeyRow } from '../../store/idempotency-keys.ts';
import { insertTables, type Rows } from '../../store/insert-rows.ts';
import { renderBroadcastEmail } from '../broadcasts/broadcast-render.ts';
import { recordEvents, type EmailState } from '../events/email-events.ts';
import { subscribedEventRows, type NewEvent } from '../events/event-log.ts';
import { emailEvents } from '../webhooks/email-payload.ts';
import { prepareEmail, type PreparedEmail } from './email-input.ts';
import { runIdempotent, type IdempotentRequest } from './idempotency.ts';
import { cancel, jobKey, jobRow, move } from '../../jobs/enqueue.ts';
import { parseScheduledAt } from './schedule.ts';
import { removedByRetention } from '../retention/retention.ts';
import type { SenderKey } from '../sending-domains/sender-domain.ts';
import { hasQuota, takeQuota } from '../projects/quotas.ts';

/** The key of an email's send job. */
export const sendJobKey = (emailId: string) => jobKey('send-email', emailId);

/** An email's send job, due when the email is (now, or at its scheduled time). */
export function sendJob(ctx: Context, emailId: string, runAt: number) {
  return jobRow(ctx, 'send-email', { email_id: emailId }, { key: sendJobKey(emailId), runAt });
}

/** Headers a send answers with besides its body: Resend's quota headers, when its project has a quota. */
export type SendHeaders = Record<string, string>;

/**
 * Stores prepared emails and their send jobs in one transaction (the outbox): once this returns,
 * every email is on disk with the job that will deliver it. An email that failed at acceptance (no
 * recipient its topic allows) gets no job. Resolves with the quota headers, if any.
 */
export async function storeEmails(ctx: Context, prepared: PreparedEmail[], idempotencyKey?: IdempotencyKeyRow): Promise<SendHeaders> {
  const rows = await emailTables(ctx, prepared);
  // A project with a quota takes the emails due to go from it in the same transaction (projects/quotas.ts).
  const project = await ctx.projects.find(prepared[0]!.email.project_id);
  const counted = hasQuota(project) ? prepared.filter((p) => p.email.last_event !== 'failed').length : 0;
  if (!idempotencyKey && counted === 0) {
    await ctx.writer.insert(rows);
    return {};
  }
  return ctx.writer.transaction(async (tx) => {
    const headers = counted > 0 ? await takeQuota(ctx, tx, project!, counted) : {};
    await insertTables(tx, rows);
    if (idempotencyKey) await insertIdempotencyKey(tx, idempotencyKey, ctx.clock.now());
    return headers;
  });
}

/**
 * The rows that store prepared emails: the emails, the send jobs of those that are due to go, and the
 * webhook outbox of their starting events. For a caller that writes them in a transaction of its own
 * (an automation's step); its commit wakes the workers.
 */
export async function emailTables(ctx: Context, prepared: PreparedEmail[]): Promise<Rows> {
  const due = prepared.filter((p) => p.email.last_event !== 'failed');
  const rows = { ...emails.emailRows(prepared), jobs: due.map((p) => sendJob(ctx, p.email.id, p.runAt)) };
  const created = await subscribedEventRows(ctx, ctx.db, prepared.flatMap(creationEvents), prepared[0]!.email.created_at);
  return { ...rows, ...created, jobs: [...rows.jobs, ...(created.jobs ?? [])] };
}

/** What an application hears of an email as it is accepted: scheduled, or failed for every recipient. */
function creationEvents({ email, events }: PreparedEmail): NewEvent[] {
  const scheduled = email.scheduled_at === null ? [] : [{ state: 'scheduled' as const, response: null }];
  return emailEvents(email, [...scheduled, ...events.map((e) => ({ state: e.type as EmailState, response: e.response }))]);
}

/**
 * POST /emails: validate, store durably (once per Idempotency-Key), answer with the id; `headers` gets
 * the quota headers of a send its project counted (a replay counts nothing and gets none).
 */
export async function sendEmail(ctx: Context, input: SendEmailInput, key: SenderKey, idempotent?: IdempotentRequest, headers: SendHeaders = {}): Promise<{ id: string }> {
  return runIdempotent(ctx, idempotent, async (record) => {
    const prepared = await prepareEmail(ctx, input, key);
    const response = { id: prepared.email.id };
    Object.assign(headers, await storeEmails(ctx, [prepared], record?.(response)));
    return response;
  });
}

type ListColumns =
  | 'id' | 'to' | 'from' | 'created_at' | 'subject' | 'bcc' | 'cc' | 'reply_to' | 'last_event' | 'scheduled_at' | 'broadcast_id' | 'message_id';

function toListItem(row: Pick<emails.EmailRow, ListColumns>) {
  return {
    id: row.id,
    to: row.to,
    from: row.from,
    created_at: row.created_at,
    subject: row.subject,
    bcc: row.bcc,
    cc: row.cc,
    reply_to: row.reply_to,
    last_event: row.last_event,
    scheduled_at: row.scheduled_at,
    message_id: row.message_id,
    // Mailroom's addition, only on a broadcast's emails (as in Resend's webhook payloads).
    ...(row.broadcast_id ? { broadcast_id: row.broadcast_id } : {}),
  };
}

async function findEmailOrThrow(ctx: Context, project: string, id: string) {
  const row = await emails.findEmailStatus(ctx.db, project, id);
  if (!row) throw notFound('Email');
  return row;
}

/**
 * An email as it is sent and shown: a broadcast's email gets its body and headers rendered for its
 * recipient (the worker and GET /emails/:id both read it here, so they never differ).
 */
export async function findEmailWithBody(ctx: Context, id: string): Promise<emails.EmailRow | undefined> {
  return withBody(ctx, await emails.findEmailById(ctx.db, id));
}

function withBody(ctx: Context, row: emails.EmailRow | undefined): emails.EmailRow | undefined | Promise<emails.EmailRow> {
  return row?.broadcast_id && !row.body_removed_at ? renderBroadcastEmail(ctx, row) : row;
}

/** Resend's email object, of the project's email. */
export async function getEmail(ctx: Context, project: string, id: string) {
  const row = await withBody(ctx, await emails.findEmail(ctx.db, project, id));
  if (!row) throw notFound('Email');
  return {
    object: 'email' as const,
    ...toListItem(row),
    html: row.html,
    text: row.text,
    tags: (row.tags ?? []).map((t) => ({ name: t.name, value: t.value ?? '' })),
    // Only when sent on a topic, as Resend's email object.
    ...(row.topic_id ? { topic_id: row.topic_id } : {}),
    // Mailroom's addition, only once retention removed the bodies: why html and text are null.
    ...(row.body_removed_at ? { body_removed_at: row.body_removed_at } : {}),
    // Mailroom's addition, only while it waits for its sending domain's cap: why, and when it goes.
    ...(row.waiting_reason ? { waiting: { reason: row.waiting_reason, until: row.scheduled_at! } } : {}),
  };
}

export async function listEmails(ctx: Context, project: string, page: PageRequest, filter?: emails.EmailFilter) {
  const result = await emails.listEmails(ctx.db, project, page, filter);
  return { has_more: result.has_more, data: result.data.map(toListItem) };
}

const NOT_SCHEDULED = 'Only scheduled emails that have not been sent can be changed.';

/** PATCH /emails/:id: moves a scheduled email to a new time. */
export async function rescheduleEmail(ctx: Context, project: string, id: string, scheduledAt: string | undefined): Promise<void> {
  await findEmailOrThrow(ctx, project, id);
  if (scheduledAt === undefined) throw new AppError('missing_required_field', 'Missing `scheduled_at` field.');
  const runAt = parseScheduledAt(scheduledAt, ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    const row = await emails.findEmailStatus(tx, project, id);
    if (row?.last_event !== 'scheduled' || !(await move(tx, sendJobKey(id), runAt))) {
      throw new AppError('validation_error', NOT_SCHEDULED);
    }
    await emails.setSchedule(tx, id, toTimestamp(runAt));
  });
}

/** POST /emails/:id/cancel: a scheduled email is not sent after all. */
export async function cancelEmail(ctx: Context, project: string, id: string): Promise<void> {
  await findEmailOrThrow(ctx, project, id);
  await ctx.writer.transaction(async (tx) => {
    const row = await emails.findEmail(tx, project, id);
    if (row?.last_event !== 'scheduled' || !(await cancel(tx, sendJobKey(id)))) {
      throw new AppError('validation_error', NOT_SCHEDULED);
    }
    await recordEvents(ctx, tx, row, [{ recipient: null, types: ['canceled'], response: null }], toTimestamp(ctx.clock.now()));
  });
}

/**
 * The bytes of an email's message: as it was last sent (captured, relayed or delivered), else, before
 * it is sent, the source an email submitted over SMTP will be sent from.
 */
export async function getRawMessage(ctx: Context, project: string, id: string): Promise<Buffer> {
  const email = await findEmailOrThrow(ctx, project, id);
  const raw = (await emails.findSentMessage(ctx.db, id)) ?? (await emails.findSource(ctx.db, id));
  if (!raw && email.body_removed_at) throw removedByRetention(ctx, 'The message was');
  if (!raw) throw notFound('Message');
  return raw;
}

/** An email's message as JSON text (Mailroom's `captured_email` object, by its first name). */
export async function getRawEmail(ctx: Context, project: string, id: string) {
  return { object: 'captured_email' as const, id, raw: (await getRawMessage(ctx, project, id)).toString('utf8') };
}

/** Every delivery event of an email, oldest first. */
export async function listEmailEvents(ctx: Context, project: string, id: string) {
  await findEmailOrThrow(ctx, project, id);
  const rows = await emails.listEvents(ctx.db, id);
  return { has_more: false, data: rows.map(({ email_id: _, ...event }) => event) };
}
