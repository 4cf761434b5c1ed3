import { sql } from 'kysely';
import { isPostgres, type Db, type Tx } from './db.ts';
import { batchedRead } from './batched-reads.ts';
import { json, parsed } from './json.ts';
import { contains } from './like-pattern.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { Rows } from './insert-rows.ts';
import { mergeMetricRows, type EmailMetricRow } from './email-metrics.ts';
import type { EmailAttachmentTable, EmailEventTable, EmailRecipientTable, EmailTable } from './schema.ts';

/** A tag as the API takes it. */
export interface Tag {
  name: string;
  value?: string;
}

/**
 * An email with its bodies, as the code uses it: lists and objects parsed. The tables keep them as JSON
 * text; this module alone turns one into the other.
 */
export interface EmailRow extends Omit<EmailTable, 'to' | 'cc' | 'bcc' | 'reply_to' | 'headers' | 'tags' | 'personalization' | 'body_removed_at' | 'waiting_reason' | 'waiting_domain'> {
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  headers: Record<string, string> | null;
  tags: Tag[] | null;
  /** A broadcast email's recipient data (domain/broadcast-render.ts reads it). */
  personalization: object | null;
  html: string | null;
  text: string | null;
  /** Set on a stored email whose bodies retention removed; a new email has none. */
  body_removed_at?: string | null;
  /** Set on a stored email that waits for its sending domain's cap (domain/sending-domains/daily-limit.ts). */
  waiting_reason?: string | null;
  waiting_domain?: string | null;
}

export type RecipientRow = EmailRecipientTable;
export type AttachmentRow = EmailAttachmentTable;
export type EventRow = EmailEventTable;

/** Everything one accepted email writes besides its job. */
export interface EmailRows {
  email: EmailRow;
  recipients: RecipientRow[];
  attachments: AttachmentRow[];
  /** Events known at acceptance: a recipient the email's topic does not allow has failed already. */
  events: EventRow[];
  /** The rollup's increments for those events (domain/metrics/rollup.ts). */
  metrics?: EmailMetricRow[];
  /** The MIME source of an email submitted whole (SMTP), sent as it is. */
  source?: Buffer;
}

function toTable({ html: _, text: __, ...email }: EmailRow): Omit<EmailTable, 'body_removed_at' | 'waiting_reason' | 'waiting_domain'> {
  return {
    ...email,
    to: JSON.stringify(email.to),
    cc: JSON.stringify(email.cc),
    bcc: JSON.stringify(email.bcc),
    reply_to: JSON.stringify(email.reply_to),
    headers: json(email.headers),
    tags: json(email.tags),
    personalization: json(email.personalization),
  };
}

type ListedColumns = 'to' | 'cc' | 'bcc' | 'reply_to';
const LISTS = ['to', 'cc', 'bcc', 'reply_to'] as const;

/** A row read from the table, its JSON columns parsed (whichever of them the query selected). */
function fromTable<T extends Partial<EmailTable>>(row: T) {
  const out: Record<string, unknown> = { ...row };
  for (const column of LISTS) if (row[column] !== undefined) out[column] = JSON.parse(row[column]);
  for (const column of ['headers', 'tags', 'personalization'] as const) if (row[column] !== undefined) out[column] = parsed(row[column]);
  return out as Omit<T, ListedColumns | 'headers' | 'tags' | 'personalization'> &
    Pick<EmailRow, Extract<keyof T, ListedColumns | 'headers' | 'tags' | 'personalization'>>;
}

/**
 * The rows that accepted emails write besides their jobs, for one insert per table. An email without
 * bodies of its own (a broadcast's, rendered from the broadcast) has no contents row.
 */
export function emailRows(emails: EmailRows[]): Rows {
  const contents = emails.filter(({ email }) => email.html !== null || email.text !== null);
  return {
    emails: emails.map(({ email }) => toTable(email)),
    email_contents: contents.map(({ email }) => ({ email_id: email.id, html: email.html, text: email.text })),
    email_recipients: emails.flatMap((e) => e.recipients),
    email_events: emails.flatMap((e) => e.events),
    email_metric_deltas: mergeMetricRows(emails.flatMap((e) => e.metrics ?? [])),
    email_attachments: emails.flatMap((e) => e.attachments),
    email_sources: emails.flatMap(({ email, source }) => (source ? [{ email_id: email.id, raw: source }] : [])),
  };
}

const emailsById = batchedRead(async (db, ids: string[]) => {
  const rows = await db
    .selectFrom('emails')
    // A broadcast's emails have no contents row: their bodies are rendered from the broadcast.
    .leftJoin('email_contents', 'email_contents.email_id', 'emails.id')
    .selectAll('emails')
    .select(['email_contents.html', 'email_contents.text'])
    .where('emails.id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, fromTable(row)]));
});

/** The email of that id in any project: for work that holds the id from its own row, job or token (delivery, bounces, tracking). */
export async function findEmailById(db: Db | Tx, id: string): Promise<EmailRow | undefined> {
  return (await emailsById(db, [id])).get(id);
}

/** The project's email of that id; another project's is none. Checked on the row, so that reads by key still share a statement. */
export async function findEmail(db: Db | Tx, project: string, id: string): Promise<EmailRow | undefined> {
  const row = await findEmailById(db, id);
  return row?.project_id === project ? row : undefined;
}

export type EmailStatus = Pick<EmailTable, 'id' | 'last_event' | 'topic_id' | 'broadcast_id' | 'body_removed_at'>;

/** Where the project's email stands, without its content; another project's is none. */
export async function findEmailStatus(db: Db | Tx, project: string, id: string): Promise<EmailStatus | undefined> {
  return db.selectFrom('emails').select(['id', 'last_event', 'topic_id', 'broadcast_id', 'body_removed_at']).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** Where an email stands, in any project: for a download link, which is its own credential. */
export async function findEmailStatusById(db: Db | Tx, id: string): Promise<EmailStatus | undefined> {
  return db.selectFrom('emails').select(['id', 'last_event', 'topic_id', 'broadcast_id', 'body_removed_at']).where('id', '=', id).executeTakeFirst();
}

/** What a list of emails may be narrowed to (the dashboard's filters); every field optional. */
export interface EmailFilter {
  /** last_event */
  status?: string;
  /** Part of a recipient's address. */
  recipient?: string;
  /** Part of the subject. */
  subject?: string;
  /** A tag's name, or `name:value`. */
  tag?: string;
  /** Created at or after / before, as Resend's timestamps (`YYYY-MM-DD HH:MM:SS...`), which sort as text. */
  since?: string;
  until?: string;
  /** The emails of this broadcast only. */
  broadcast_id?: string;
}

export async function listEmails(db: Db, project: string, page: PageRequest, filter: EmailFilter = {}) {
  const columns = ['id', 'to', 'from', 'created_at', 'subject', 'bcc', 'cc', 'reply_to', 'last_event', 'scheduled_at', 'broadcast_id', 'message_id'] as const;
  let query = db.selectFrom('emails').select(columns).where('project_id', '=', project);
  if (filter.status) query = query.where('last_event', '=', filter.status);
  if (filter.broadcast_id) query = query.where('broadcast_id', '=', filter.broadcast_id);
  if (filter.subject) query = query.where(sql<boolean>`lower(subject) like ${contains(filter.subject.toLowerCase())} escape '\\'`);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  if (filter.until) query = query.where('created_at', '<', filter.until);
  if (filter.tag) {
    const [name, value] = filter.tag.split(':', 2);
    const tag = value === undefined ? `"name":${JSON.stringify(name)}` : `"name":${JSON.stringify(name)},"value":${JSON.stringify(value)}`;
    query = query.where(sql<boolean>`tags like ${contains(tag)} escape '\\'`);
  }
  if (filter.recipient) {
    const pattern = contains(filter.recipient.toLowerCase());
    query = query.where(({ exists, selectFrom }) =>
      exists(selectFrom('email_recipients').select('email_id').whereRef('email_recipients.email_id', '=', 'emails.id').where(sql<boolean>`lower(address) like ${pattern} escape '\\'`)),
    );
  }
  const result = await selectPage(query, 'id', page);
  return { has_more: result.has_more, data: result.data.map((row) => fromTable(row)) };
}

/** How many of a broadcast's emails are in each status (last_event); statuses with none are absent. */
export async function countBroadcastEmails(db: Db, broadcastId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('emails')
    .select((eb) => ['last_event', eb.fn.countAll<number | string | bigint>().as('n')])
    .where('broadcast_id', '=', broadcastId)
    .groupBy('last_event')
    .execute();
  // PostgreSQL counts in bigint, which pg hands over as a string.
  return Object.fromEntries(rows.map((row) => [row.last_event, Number(row.n)]));
}

const recipientsOf = batchedRead(async (db, emailIds: string[]) => {
  const rows = await db.selectFrom('email_recipients').selectAll().where('email_id', 'in', emailIds).execute();
  const byEmail = new Map<string, RecipientRow[]>();
  for (const row of rows) byEmail.set(row.email_id, [...(byEmail.get(row.email_id) ?? []), row]);
  return byEmail;
});

export async function findRecipients(db: Db, emailId: string): Promise<RecipientRow[]> {
  return (await recipientsOf(db, [emailId])).get(emailId) ?? [];
}

type ContentBytes = { attachments: number; source: number | null };

const contentBytesOf = batchedRead(async (db, emailIds: string[]) => {
  const ids = sql.join(emailIds);
  const { rows } = await sql<{ email_id: string; attachments: number | string | null; source: number | string | null }>`
    select email_id, sum(length(content)) as attachments, null as source from email_attachments where email_id in (${ids}) group by email_id
    union all
    select email_id, null, length(raw) from email_sources where email_id in (${ids})`.execute(db);
  const bytes = new Map<string, ContentBytes>();
  for (const row of rows) {
    const seen = bytes.get(row.email_id) ?? { attachments: 0, source: null };
    if (row.attachments !== null) seen.attachments = Number(row.attachments);
    if (row.source !== null) seen.source = Number(row.source);
    bytes.set(row.email_id, seen);
  }
  return bytes;
});

/** How many bytes of attachments an email has (0 without any), and of its MIME source (null: composed, not submitted). */
export async function contentBytes(db: Db, emailId: string): Promise<ContentBytes> {
  return (await contentBytesOf(db, [emailId])).get(emailId) ?? { attachments: 0, source: null };
}

/** The MIME source of an email submitted whole, as stored. */
export async function findSource(db: Db, emailId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('email_sources').select('raw').where('email_id', '=', emailId).executeTakeFirst();
  return row?.raw;
}

export async function findAttachments(db: Db, emailId: string): Promise<AttachmentRow[]> {
  return db.selectFrom('email_attachments').selectAll().where('email_id', '=', emailId).orderBy('position').execute();
}

/** An email's attachments in the order they were given, without their bytes: `size` counts them. */
export async function listAttachmentSummaries(db: Db, emailId: string) {
  const rows = await db
    .selectFrom('email_attachments')
    .select(['position', 'filename', 'content_type', 'content_id', sql<number>`length(content)`.as('size')])
    .where('email_id', '=', emailId)
    .orderBy('position')
    .execute();
  return rows.map((row) => ({ ...row, size: Number(row.size) }));
}

export async function findAttachment(db: Db, emailId: string, position: number): Promise<AttachmentRow | undefined> {
  return db.selectFrom('email_attachments').selectAll().where('email_id', '=', emailId).where('position', '=', position).executeTakeFirst();
}

export async function setLastEvent(tx: Db | Tx, id: string, lastEvent: string): Promise<void> {
  await tx.updateTable('emails').set({ last_event: lastEvent }).where('id', '=', id).execute();
}

/** A new time the sender chose: it replaces a wait for the sending domain's cap. */
export async function setSchedule(tx: Tx, id: string, scheduledAt: string): Promise<void> {
  await tx.updateTable('emails').set({ scheduled_at: scheduledAt, waiting_reason: null, waiting_domain: null }).where('id', '=', id).execute();
}

/** Marks an email as waiting for the cap of `domainId` until `until` (its scheduled_at), or no longer (nulls). */
export async function setWaiting(tx: Db | Tx, id: string, waiting: { reason: string; domainId: string; until: string } | null): Promise<void> {
  const changes = waiting ? { waiting_reason: waiting.reason, waiting_domain: waiting.domainId, scheduled_at: waiting.until } : { waiting_reason: null, waiting_domain: null };
  await tx.updateTable('emails').set(changes).where('id', '=', id).execute();
}

/**
 * The pending recipients of the emails older than `emailId` that wait for the cap of `domainId` and are
 * due at `at`: the slots they go first for.
 */
export async function countWaitingAhead(tx: Tx, domainId: string, emailId: string, at: string, pending: string[]): Promise<number> {
  const row = await tx
    .selectFrom('emails')
    .innerJoin('email_recipients', 'email_recipients.email_id', 'emails.id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('emails.waiting_domain', '=', domainId)
    .where('emails.id', '<', emailId)
    .where('emails.scheduled_at', '<=', at)
    .where('email_recipients.status', 'in', pending)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The email took its cap's slots: younger emails no longer leave them to it (it stays shown waiting until its send is recorded). */
export async function releaseWaitingTurn(tx: Tx, id: string): Promise<void> {
  await tx.updateTable('emails').set({ waiting_domain: null }).where('id', '=', id).where('waiting_domain', 'is not', null).execute();
}

export async function setRecipientStatus(tx: Tx, emailId: string, address: string, status: string): Promise<void> {
  await tx
    .updateTable('email_recipients')
    .set({ status })
    .where('email_id', '=', emailId)
    .where('address', '=', address)
    .execute();
}

/** Sets a recipient's status to `status` where it now stands at one of `below`. */
export async function raiseRecipientStatus(tx: Tx, emailId: string, address: string, status: string, below: string[]): Promise<void> {
  await tx
    .updateTable('email_recipients')
    .set({ status })
    .where('email_id', '=', emailId)
    .where('address', '=', address)
    .where('status', 'in', below)
    .execute();
}

export async function setRecipientsStatus(tx: Tx, emailId: string, status: string): Promise<void> {
  await tx.updateTable('email_recipients').set({ status }).where('email_id', '=', emailId).execute();
}

export async function insertEvents(tx: Db | Tx, events: EventRow[]): Promise<void> {
  if (events.length > 0) await tx.insertInto('email_events').values(events).execute();
}

/** Whether a recipient has an event of this type not made by a bot (an open or click before this one). */
export async function hasEngaged(tx: Tx, emailId: string, recipient: string, type: string): Promise<boolean> {
  const row = await tx
    .selectFrom('email_events')
    .select('id')
    .where('email_id', '=', emailId)
    .where('recipient', '=', recipient)
    .where('type', '=', type)
    .where('bot', '=', 0)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Holds an email's row until the transaction ends (PostgreSQL); SQLite runs one write transaction at a time already. */
export async function lockEmail(tx: Tx, emailId: string): Promise<void> {
  if (isPostgres(tx)) await tx.selectFrom('emails').select('id').where('id', '=', emailId).forUpdate().execute();
}

/** The events of some emails, each email's in the order written, with its sender and broadcast (the metrics' per-email reading). */
/** The events of those of `emailIds` that are the project's, by email, in order. */
export async function listEventsOfEmails(db: Db, project: string, emailIds: string[]) {
  if (emailIds.length === 0) return [];
  return db
    .selectFrom('email_events')
    .innerJoin('emails', 'emails.id', 'email_events.email_id')
    .select(['email_events.email_id', 'email_events.type', 'email_events.recipient', 'email_events.response', 'email_events.bot', 'email_events.created_at', 'emails.from', 'emails.broadcast_id'])
    .where('email_events.email_id', 'in', emailIds)
    .where('emails.project_id', '=', project)
    .orderBy('email_events.email_id')
    .orderBy('email_events.id')
    .execute();
}

/** Up to `limit` ids of the project's emails with an event in [from, to) (our timestamps): a scan of the events. */
export async function emailIdsWithEvents(db: Db, project: string, from: string, to: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('email_events')
    .innerJoin('emails', 'emails.id', 'email_events.email_id')
    .select('email_events.email_id')
    .distinct()
    .where('email_events.created_at', '>=', from)
    .where('email_events.created_at', '<', to)
    .where('emails.project_id', '=', project)
    .limit(limit)
    .execute();
  return rows.map((row) => row.email_id);
}

export async function listEvents(db: Db, emailId: string): Promise<EventRow[]> {
  return db.selectFrom('email_events').selectAll().where('email_id', '=', emailId).orderBy('id').execute();
}

/** Stores the message an email was sent as; a later attempt's (a new Date header) replaces it. */
export async function saveSentMessage(db: Db | Tx, emailId: string, raw: Buffer, at: string): Promise<void> {
  await db
    .insertInto('sent_messages')
    .values({ email_id: emailId, raw, created_at: at })
    // excluded.*, not the values again, which would send the message to the database twice.
    .onConflict((oc) => oc.column('email_id').doUpdateSet((eb) => ({ raw: eb.ref('excluded.raw'), created_at: eb.ref('excluded.created_at') })))
    .execute();
}

export async function findSentMessage(db: Db, emailId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('sent_messages').select('raw').where('email_id', '=', emailId).executeTakeFirst();
  return row?.raw;
}

/** What changes whenever an email is added or its state moves (each move adds an event row): the newest ids of both. */
export async function emailsChangeMarker(db: Db): Promise<string> {
  const [email, event] = await Promise.all([
    db.selectFrom('emails').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst(),
    db.selectFrom('email_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst(),
  ]);
  return `${email?.id ?? ''}|${event?.id ?? ''}`;
}
