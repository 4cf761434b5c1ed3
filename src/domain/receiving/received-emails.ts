import { isoTime } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import * as store from '../../store/received-emails.ts';
import { slicePage, type Page, type PageRequest } from '../../store/paginate.ts';
import { downloadExpiry, downloadLink } from '../links/download-links.ts';
import type { DownloadFile } from '../links/downloads.ts';
import { removedByRetention } from '../retention/retention.ts';

// Resend's receiving API: received emails, their attachments and their original bytes, each file
// behind a signed download link.

type Meta = store.AttachmentMeta;

/** Resend's dispositions; a message may say anything else, which is shown as none. */
const disposition = (value: string | null): 'inline' | 'attachment' | null => (value === 'inline' || value === 'attachment' ? value : null);

/** An attachment as an email lists it. */
const summary = ({ id, filename, content_type, content_id, content_disposition, size }: Meta) => ({
  id,
  filename,
  content_type,
  content_id,
  content_disposition: disposition(content_disposition),
  size,
});

function listed(row: store.ReceivedEmailListRow, attachments: Meta[]) {
  const { id, to, from, created_at, subject, bcc, cc, reply_to, received_for, message_id } = row;
  return { id, to, from, created_at: isoTime(created_at), subject, bcc, cc, reply_to, received_for, message_id, attachments: attachments.map(summary) };
}

/** GET /emails/receiving: the project's, newest first (everything without `limit`, as Resend), each with its attachments. */
export async function listReceivedEmails(ctx: Context, project: string, page: PageRequest) {
  const result = await store.listReceivedEmails(ctx.db, project, page);
  const withAttachments = async (rows: store.ReceivedEmailListRow[]) => {
    const byEmail = new Map<string, Meta[]>(rows.map((row) => [row.id, []]));
    for (const meta of await store.listAttachmentMeta(ctx.db, rows.map((row) => row.id))) byEmail.get(meta.email_id)!.push(meta);
    return rows.map((row) => listed(row, byEmail.get(row.id)!));
  };
  async function* rest(slices: AsyncIterable<store.ReceivedEmailListRow[]>) {
    for await (const slice of slices) yield await withAttachments(slice);
  }
  const data = await withAttachments(result.data);
  return { has_more: result.has_more, data, ...(result.rest ? { rest: rest(result.rest) } : {}) } satisfies Page<ReturnType<typeof listed>>;
}

export type HtmlFormat = 'data_uri' | 'cid';

/** `cid:` links of the HTML turned into data URIs of the inline attachments they name. */
async function inlineImages(ctx: Context, html: string, attachments: Meta[]): Promise<string> {
  const byCid = new Map(attachments.filter((a) => a.content_id !== null).map((a) => [a.content_id!.toLowerCase(), a]));
  if (byCid.size === 0 || !/cid:/i.test(html)) return html;
  const uris = new Map<string, string>();
  for (const [cid, meta] of byCid) {
    if (!html.toLowerCase().includes(`cid:${cid}`)) continue;
    const row = await store.findAttachmentById(ctx.db, meta.id);
    if (row) uris.set(cid, `data:${row.content_type};base64,${row.content.toString('base64')}`);
  }
  return html.replace(/cid:([^"'\s)>]+)/gi, (link, cid: string) => uris.get(cid.toLowerCase()) ?? link);
}

async function findOrThrow(ctx: Context, project: string, id: string) {
  const email = await store.findReceivedEmail(ctx.db, project, id.toLowerCase());
  if (!email) throw notFound('Email');
  return email;
}

/** GET /emails/receiving/:id: the whole email, with a link to its original bytes. */
export async function getReceivedEmail(ctx: Context, project: string, id: string, htmlFormat: HtmlFormat = 'data_uri') {
  const email = await findOrThrow(ctx, project, id);
  const attachments = await store.listAttachmentMeta(ctx.db, [email.id]);
  const html = email.html !== null && htmlFormat === 'data_uri' ? await inlineImages(ctx, email.html, attachments) : email.html;
  return {
    object: 'email' as const,
    ...listed(email, attachments),
    html,
    html_format: htmlFormat,
    text: email.text,
    headers: email.headers,
    authentication: email.authentication,
    raw: email.body_removed_at ? null : downloadLink(ctx, { kind: 'received-message', id: email.id }),
    // Mailroom's addition, only once retention removed the bodies: why html, text and raw are null.
    ...(email.body_removed_at ? { body_removed_at: isoTime(email.body_removed_at) } : {}),
  };
}

function attachmentItem(ctx: Context, meta: Meta, expiresAt: number) {
  return { ...summary(meta), ...downloadLink(ctx, { kind: 'received-attachment', id: meta.id }, expiresAt) };
}

/** GET /emails/receiving/:id/attachments: in the message's order (all of them without `limit`), links expiring at `expiresAt`. */
export async function listReceivedAttachments(ctx: Context, project: string, emailId: string, page: PageRequest, expiresAt = downloadExpiry(ctx)) {
  const email = await findOrThrow(ctx, project, emailId);
  const { has_more, data } = slicePage(await store.listAttachmentMeta(ctx.db, [email.id]), page);
  return { has_more, data: data.map((meta) => attachmentItem(ctx, meta, expiresAt)) };
}

/** GET /emails/receiving/:id/attachments/:attachment_id. */
export async function getReceivedAttachment(ctx: Context, project: string, emailId: string, id: string) {
  const email = await store.findReceivedEmail(ctx.db, project, emailId.toLowerCase());
  const row = email && (await store.findAttachmentMeta(ctx.db, email.id, id.toLowerCase()));
  if (!row && email?.body_removed_at) throw removedByRetention(ctx, 'The attachment was');
  if (!row) throw notFound('Attachment');
  return { object: 'attachment' as const, ...attachmentItem(ctx, row, downloadExpiry(ctx)) };
}

/** The loader of `received-attachment` links. */
export async function loadReceivedAttachment(ctx: Context, id: string): Promise<DownloadFile | undefined> {
  const row = await store.findAttachmentById(ctx.db, id);
  return row && { bytes: row.content, contentType: row.content_type, filename: row.filename };
}

/** The loader of `received-message` links: the message as it arrived, as an .eml file. */
export async function loadReceivedMessage(ctx: Context, id: string): Promise<DownloadFile | undefined> {
  const raw = await store.findRawMessage(ctx.db, id);
  if (raw) return { bytes: raw, contentType: 'message/rfc822', filename: `${id}.eml` };
  if ((await store.findReceivedStatusById(ctx.db, id))?.body_removed_at) throw removedByRetention(ctx, 'The message was');
  return undefined;
}

/** The project's received email as it arrived, for the dashboard's download; undefined when retention removed it. */
export async function getReceivedMessage(ctx: Context, project: string, id: string): Promise<DownloadFile | undefined> {
  const email = await findOrThrow(ctx, project, id);
  return loadReceivedMessage(ctx, email.id);
}
