import type { Db, Tx } from './db.ts';
import { json, parsed } from './json.ts';
import { mapPage, selectPage, type Page, type PageRequest } from './paginate.ts';
import type { ReceivedAttachmentTable, ReceivedEmailTable } from './schema.ts';

/** What mailauth concluded of a received message: pass, fail, softfail, neutral, none, temperror, permerror. */
export interface Authentication {
  spf: string;
  dkim: string;
  dmarc: string;
}

/** A received email as the code uses it: its lists and objects parsed. */
export interface ReceivedEmailRow extends Omit<ReceivedEmailTable, 'received_for' | 'to' | 'cc' | 'bcc' | 'reply_to' | 'headers' | 'authentication' | 'body_removed_at'> {
  received_for: string[];
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  headers: Record<string, string>;
  authentication: Authentication | null;
  /** Set on a stored email whose html, text, attachments and bytes retention removed; a new email has none. */
  body_removed_at?: string | null;
}

export type ReceivedAttachmentRow = ReceivedAttachmentTable;
export type AttachmentMeta = Omit<ReceivedAttachmentRow, 'content'>;

const LIST_COLUMNS = ['id', 'created_at', 'envelope_from', 'received_for', 'client_address', 'from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'message_id', 'size'] as const;
const META_COLUMNS = ['id', 'email_id', 'position', 'filename', 'content_type', 'content_disposition', 'content_id', 'size'] as const;

export type ReceivedEmailListRow = Pick<ReceivedEmailRow, (typeof LIST_COLUMNS)[number]>;

const list = (text: string) => JSON.parse(text) as string[];

function listFromTable(row: Pick<ReceivedEmailTable, (typeof LIST_COLUMNS)[number]>): ReceivedEmailListRow {
  return { ...row, received_for: list(row.received_for), to: list(row.to), cc: list(row.cc), bcc: list(row.bcc), reply_to: list(row.reply_to) };
}

function fromTable(row: ReceivedEmailTable): ReceivedEmailRow {
  return { ...row, ...listFromTable(row), headers: JSON.parse(row.headers) as Record<string, string>, authentication: parsed(row.authentication) };
}

function toTable(row: ReceivedEmailRow): Omit<ReceivedEmailTable, 'body_removed_at'> {
  const text = JSON.stringify;
  return {
    ...row,
    received_for: text(row.received_for),
    to: text(row.to),
    cc: text(row.cc),
    bcc: text(row.bcc),
    reply_to: text(row.reply_to),
    headers: text(row.headers),
    authentication: json(row.authentication),
  };
}

/** The email, its bytes and its attachments, in the caller's transaction. */
export async function insertReceivedEmail(tx: Tx, email: ReceivedEmailRow, raw: Buffer, attachments: ReceivedAttachmentRow[]): Promise<void> {
  await tx.insertInto('received_emails').values(toTable(email)).execute();
  await tx.insertInto('received_messages').values({ email_id: email.id, raw }).execute();
  if (attachments.length > 0) await tx.insertInto('received_attachments').values(attachments).execute();
}

/** The project's received email of that id; another project's is none. */
export async function findReceivedEmail(db: Db, project: string, id: string): Promise<ReceivedEmailRow | undefined> {
  const row = await db.selectFrom('received_emails').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && fromTable(row);
}

/** The project of the received email of that id and whether retention removed its bodies, for what a signed link names (whichever its project). */
export async function findReceivedStatusById(db: Db, id: string): Promise<Pick<ReceivedEmailTable, 'project_id' | 'body_removed_at'> | undefined> {
  return db.selectFrom('received_emails').select(['project_id', 'body_removed_at']).where('id', '=', id).executeTakeFirst();
}

/** The project's received emails, newest first, without their bodies and headers. */
export async function listReceivedEmails(db: Db, project: string, page: PageRequest): Promise<Page<ReceivedEmailListRow>> {
  return mapPage(await selectPage(db.selectFrom('received_emails').select(LIST_COLUMNS).where('project_id', '=', project), 'id', page), listFromTable);
}

/** The attachments (without their bytes) of each of `emailIds`, in order. */
export async function listAttachmentMeta(db: Db, emailIds: string[]): Promise<AttachmentMeta[]> {
  if (emailIds.length === 0) return [];
  return db.selectFrom('received_attachments').select(META_COLUMNS).where('email_id', 'in', emailIds).orderBy('email_id').orderBy('position').execute();
}

/** One attachment of an email, without its bytes (up to 40 MB, which its description does not need). */
export async function findAttachmentMeta(db: Db, emailId: string, id: string): Promise<AttachmentMeta | undefined> {
  return db.selectFrom('received_attachments').select(META_COLUMNS).where('email_id', '=', emailId).where('id', '=', id).executeTakeFirst();
}

export async function findAttachmentById(db: Db, id: string): Promise<ReceivedAttachmentRow | undefined> {
  return db.selectFrom('received_attachments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findRawMessage(db: Db, emailId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('received_messages').select('raw').where('email_id', '=', emailId).executeTakeFirst();
  return row?.raw;
}
