import { AppError, invalidField, quoted } from '../../errors.ts';
import type { AttachmentInput } from './email-input.ts';
import type { AttachmentRow } from '../../store/emails.ts';
import { fetchRemoteFile, REMOTE_TIMEOUT_MS } from './remote-attachments.ts';

/** All attachments of one email together, measured as base64, as Resend counts them. */
export const MAX_ATTACHMENTS_BASE64 = 40 * 1024 * 1024;
export const MAX_ATTACHMENTS = 100;
const CONTENT_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;[^\r\n]*)?$/;
// A file given one of these types is composed as MIME structure rather than as a file: invalid MIME.
const CONTAINER_TYPE = /^(multipart|message)\//i;
const CONTENT_ID = /^<?([^\s<>]+)>?$/;

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

function checkText(value: string | undefined, field: string, pattern?: RegExp): string | null {
  if (value === undefined || value === '') return null;
  if (/[\r\n\0]/.test(value) || (pattern && !pattern.test(value))) throw invalidField(field, `${quoted(value)} is not valid.`);
  return value;
}

/** Base64, with line breaks or spaces anywhere (Buffer.from skips them), checked without copying the text. */
function isBase64(text: string): boolean {
  if (/[^A-Za-z0-9+/=\s]/.test(text)) return false;
  const padding = text.indexOf('=');
  return padding === -1 || /^=\s*(=\s*)?$/.test(text.slice(padding));
}

/** The bytes of `content`: a base64 string, or an array of byte values (the form the Python and Ruby SDKs send). */
function decodeContent(content: string | number[], field: string): Buffer {
  if (Array.isArray(content)) return Buffer.from(content);
  if (!isBase64(content)) throw new AppError('invalid_attachment', `The \`${field}.content\` must be base64-encoded.`);
  return Buffer.from(content, 'base64');
}

const hasValue = (value: string | number[] | undefined) => value !== undefined && value.length > 0;

/**
 * Decodes `content` or fetches `path` for each attachment and enforces the 40 MB total. A path is
 * fetched at acceptance, so what was accepted is what is sent, whatever the URL serves later; all the
 * fetches of one email share one deadline.
 */
export async function loadAttachments(
  emailId: string,
  attachments: AttachmentInput[],
  allowPrivate: boolean,
): Promise<AttachmentRow[]> {
  let total = 0;
  const rows: AttachmentRow[] = [];
  // Made with the first fetch: most emails have none, and a timer per email costs the hot path.
  let deadline: AbortSignal | undefined;
  for (const [position, attachment] of attachments.entries()) {
    const field = `attachments[${position}]`;
    const hasContent = hasValue(attachment.content);
    const hasPath = hasValue(attachment.path);
    if (hasContent === hasPath) {
      throw new AppError('invalid_attachment', `Attachment must have either a \`content\` or \`path\` (${field}).`);
    }
    let filename = checkText(attachment.filename, `${field}.filename`);
    const contentType = checkText(attachment.content_type, `${field}.content_type`, CONTENT_TYPE);
    if (contentType && CONTAINER_TYPE.test(contentType)) {
      throw invalidField(`${field}.content_type`, 'multipart/* and message/* types cannot be attached; send the file with its own type.');
    }
    let content: Buffer;
    if (hasContent) {
      content = decodeContent(attachment.content!, field);
    } else {
      const maxBytes = Math.floor(((MAX_ATTACHMENTS_BASE64 - total) * 3) / 4);
      deadline ??= AbortSignal.timeout(REMOTE_TIMEOUT_MS);
      const file = await fetchRemoteFile(attachment.path!, `${field}.path`, { allowPrivate, maxBytes, signal: deadline });
      content = file.content;
      // The name in the URL; the type then follows from the name, like that of any attachment.
      filename ??= file.filename && !/[\r\n\0]/.test(file.filename) ? file.filename : null;
    }
    total += base64Length(content.length);
    if (total > MAX_ATTACHMENTS_BASE64) break;
    // `inline_content_id` is the name Resend's newer documents give `content_id`.
    const contentId = checkText(attachment.content_id ?? attachment.inline_content_id, `${field}.content_id`, CONTENT_ID);
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
