import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { nameBasedId } from '../../time/ids.ts';
import * as emails from '../../store/emails.ts';
import { slicePage, type PageRequest } from '../../store/paginate.ts';
import { downloadExpiry, downloadLink } from '../links/download-links.ts';
import { removedByRetention } from '../retention/retention.ts';
import type { DownloadFile } from '../links/downloads.ts';

// The attachments of a sent email, as GET /emails/:id/attachments shows them. Rows have no id column:
// each id is derived from the email and the attachment's position, so it is stable without a migration.

type Summary = Awaited<ReturnType<typeof emails.listAttachmentSummaries>>[number];

/** An attachment's id: a name-based UUID of its email and position. */
const attachmentId = (emailId: string, position: number) => nameBasedId(`mailroom email attachment\0${emailId}\0${position}`);

/** The type the attachment was sent with: as given, else what the composer derives from the name. */
const contentTypeOf = (row: Pick<Summary, 'content_type' | 'filename'>) => row.content_type ?? detectMimeType(row.filename || 'bin');

/** What the download links of kind `email-attachment` name: the email and the position. */
const downloadId = (emailId: string, position: number) => `${emailId}.${position}`;

async function summariesOf(ctx: Context, project: string, emailId: string) {
  const email = await emails.findEmailStatus(ctx.db, project, emailId);
  if (!email) throw notFound('Email');
  const rows = await emails.listAttachmentSummaries(ctx.db, email.id);
  return { removed: email.body_removed_at !== null, rows: rows.map((row) => ({ ...row, email_id: email.id, id: attachmentId(email.id, row.position) })) };
}

function toItem(ctx: Context, row: Summary & { email_id: string; id: string }, expiresAt: number) {
  const { download_url, expires_at } = downloadLink(ctx, { kind: 'email-attachment', id: downloadId(row.email_id, row.position) }, expiresAt);
  return {
    id: row.id,
    filename: row.filename,
    content_type: contentTypeOf(row),
    content_id: row.content_id,
    content_disposition: row.content_id === null ? ('attachment' as const) : ('inline' as const),
    download_url,
    expires_at,
    size: row.size,
  };
}

/** GET /emails/:id/attachments: in the order they were sent, each with a fresh download link (expiring at `expiresAt`, an hour by default). */
export async function listEmailAttachments(ctx: Context, project: string, emailId: string, page: PageRequest, expiresAt = downloadExpiry(ctx)) {
  const { has_more, data } = slicePage((await summariesOf(ctx, project, emailId)).rows, page);
  return { has_more, data: data.map((row) => toItem(ctx, row, expiresAt)) };
}

/** GET /emails/:id/attachments/:attachment_id: Resend's attachment object. */
export async function getEmailAttachment(ctx: Context, project: string, emailId: string, id: string) {
  const { removed, rows } = await summariesOf(ctx, project, emailId);
  const row = rows.find((summary) => summary.id === id.toLowerCase());
  if (!row) throw removed ? removedByRetention(ctx, 'The attachment was') : notFound('Attachment');
  return { object: 'attachment' as const, ...toItem(ctx, row, downloadExpiry(ctx)) };
}

/** The loader of `email-attachment` links. */
export async function loadEmailAttachment(ctx: Context, id: string): Promise<DownloadFile | undefined> {
  const match = /^(.+)\.(\d{1,3})$/.exec(id);
  const row = match && (await emails.findAttachment(ctx.db, match[1]!, Number(match[2])));
  if (row) return { bytes: row.content, contentType: contentTypeOf(row), filename: row.filename };
  if (match && (await emails.findEmailStatusById(ctx.db, match[1]!))?.body_removed_at) throw removedByRetention(ctx, 'The attachment was');
  return undefined;
}
