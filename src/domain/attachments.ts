import type { Static } from 'typebox';
import { AppError, invalidField } from '../http/errors.ts';
import type { Attachment } from '../http/schemas.ts';
import type { AttachmentRow } from '../store/emails.ts';
import { fetchRemoteFile } from './remote-attachments.ts';

/** All attachments of one email together, measured as base64, as Resend counts them. */
export const MAX_ATTACHMENTS_BASE64 = 40 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const CONTENT_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;[^\r\n]*)?$/;
const CONTENT_ID = /^<?([^\s<>]+)>?$/;

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

function checkText(value: string | undefined, field: string, pattern?: RegExp): string | null {
  if (value === undefined || value === '') return null;
  if (/[\r\n\0]/.test(value) || (pattern && !pattern.test(value))) throw invalidField(field, `"${value}" is not valid.`);
  return value;
}

/**
 * Decodes `content` or fetches `path` for each attachment and enforces the 40 MB total. A path is
 * fetched at acceptance, so what was accepted is what is sent, whatever the URL serves later.
 */
export async function loadAttachments(
  emailId: string,
  attachments: Static<typeof Attachment>[],
  allowPrivate: boolean,
): Promise<AttachmentRow[]> {
  let total = 0;
  const rows: AttachmentRow[] = [];
  for (const [position, attachment] of attachments.entries()) {
    const field = `attachments[${position}]`;
    const hasContent = attachment.content !== undefined && attachment.content !== '';
    const hasPath = attachment.path !== undefined && attachment.path !== '';
    if (hasContent === hasPath) {
      throw new AppError('invalid_attachment', `Attachment must have either a \`content\` or \`path\` (${field}).`);
    }
    let content: Buffer;
    let filename = checkText(attachment.filename, `${field}.filename`);
    const contentType = checkText(attachment.content_type, `${field}.content_type`, CONTENT_TYPE);
    if (hasContent) {
      const base64 = attachment.content!.replace(/\s+/g, '');
      if (!BASE64.test(base64)) throw new AppError('invalid_attachment', `The \`${field}.content\` must be base64-encoded.`);
      total += base64.length;
      if (total > MAX_ATTACHMENTS_BASE64) break;
      content = Buffer.from(base64, 'base64');
    } else {
      const maxBytes = Math.floor(((MAX_ATTACHMENTS_BASE64 - total) * 3) / 4);
      const file = await fetchRemoteFile(attachment.path!, { allowPrivate, maxBytes });
      content = file.content;
      total += base64Length(content.length);
      // The name in the URL; the type then follows from the name, like that of any attachment.
      filename ??= file.filename && !/[\r\n\0]/.test(file.filename) ? file.filename : null;
    }
    const contentId = checkText(attachment.content_id, `${field}.content_id`, CONTENT_ID);
    rows.push({
      email_id: emailId,
      position,
      filename,
      content_type: contentType,
      content_id: contentId && contentId.replace(CONTENT_ID, '$1'),
      content,
    });
  }
  if (total > MAX_ATTACHMENTS_BASE64) {
    throw new AppError('invalid_attachment', 'Attachments may total at most 40 MB per email (counted as base64).');
  }
  return rows;
}
