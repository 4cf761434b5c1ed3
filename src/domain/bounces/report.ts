// What a bounce or complaint report says: an RFC 3464 delivery status notification (multipart/report
// with a message/delivery-status part) or an RFC 5965 ARF feedback report (a message/feedback-report
// part), each with the original message or its headers as its last part. Their parts are header
// blocks, read here by a small parser of our own: mailparser folds the delivery-status part and an
// attached message into the text. Pure, and forgiving: anything it cannot read is no report. Anyone can
// mail one, so it runs in linear time: each field is cut before it is read, and no pattern backtracks.
import { createHash } from 'node:crypto';

/** One recipient's block of a DSN; fields as the report wrote them (Status `5.1.1`, Action `failed`). */
export interface DsnRecipient {
  /** Final-Recipient, else Original-Recipient, without its `rfc822;` type. */
  address: string | undefined;
  action: string;
  status: string | undefined;
  diagnostic: string | undefined;
}

/** `receipt` names the report itself, so that one delivered twice records once: its Message-ID, else a hash of it. */
export type Report =
  | { kind: 'dsn'; receipt: string; originalMessageId: string | undefined; recipients: DsnRecipient[] }
  | { kind: 'complaint'; receipt: string; originalMessageId: string | undefined; feedbackType: string; originalRecipient: string | undefined };

type Fields = Map<string, string>;

/** A field longer than this is cut: no field of a report needs more (an address is at most 256, RFC 5321). */
export const MAX_FIELD = 1000;
/** A boundary is at most 70 characters (RFC 2046); a longer one is no report of a mail server. */
const MAX_BOUNDARY = 70;

/** A header block's fields: lower-case names, folded lines joined, each cut at MAX_FIELD, the first of a repeated field kept. */
function fieldsOf(block: string): Fields {
  const fields: Fields = new Map();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || colon > MAX_FIELD) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1, colon + 1 + MAX_FIELD).trim());
  }
  return fields;
}

/** Splits an entity into its header block and its body at the first blank line. */
function entity(text: string): { headers: Fields; body: string } {
  const end = text.search(/\r?\n\r?\n/);
  if (end === -1) return { headers: fieldsOf(text), body: '' };
  return { headers: fieldsOf(text.slice(0, end)), body: text.slice(end).replace(/^\r?\n\r?\n/, '') };
}

function decode(body: string, encoding: string | undefined): string {
  const name = encoding?.toLowerCase();
  if (name === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (name === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** The top-level parts of a multipart/report: content type (lower-case, no parameters) and decoded body; and the report's own headers. */
function reportParts(raw: string): { headers: Fields; body: string; parts: { type: string; body: string }[] } {
  const { headers, body } = entity(raw);
  const contentType = headers.get('content-type') ?? '';
  if (!/^multipart\/report\b/i.test(contentType)) return { headers, body, parts: [] };
  const boundary = contentType.match(/boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i);
  const name = boundary?.[1] ?? boundary?.[2];
  if (!name || name.length > MAX_BOUNDARY) return { headers, body, parts: [] };
  const delimiter = `--${name}`;
  const chunks = `\r\n${body}`.split(new RegExp(`\\r?\\n${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  // The preamble comes before the first delimiter; the close delimiter's part starts with `--`.
  const parts = chunks.slice(1).filter((chunk) => !chunk.startsWith('--')).map((chunk) => {
    const part = entity(chunk.replace(/^[ \t]*\r?\n/, ''));
    const type = (part.headers.get('content-type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
    return { type, body: decode(part.body, part.headers.get('content-transfer-encoding')) };
  });
  return { headers, body, parts };
}

/** An address of a report's field is at most this long (RFC 5321's path). */
const MAX_ADDRESS = 256;

/**
 * `rfc822; a@b.c` (or `<a@b.c>`, or no type) -> `a@b.c`; an address type other than rfc822 names no
 * address of ours. Read by hand, in one pass: a pattern here once backtracked on `a@a@a@...`.
 */
export function typedAddress(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const semicolon = value.indexOf(';');
  const type = semicolon === -1 ? undefined : value.slice(0, semicolon).trim();
  if (type !== undefined && type.toLowerCase() !== 'rfc822') return undefined;
  let address = value.slice(semicolon + 1).trim();
  if (address.startsWith('<')) address = address.slice(1);
  if (address.endsWith('>')) address = address.slice(0, -1);
  const at = address.lastIndexOf('@');
  if (address.length > MAX_ADDRESS || at <= 0 || at === address.length - 1 || /[\s<>]/.test(address)) return undefined;
  return address;
}

/** The Message-ID of the original message, from the report's last part (the message or its headers). */
function originalMessageId(parts: { type: string; body: string }[]): string | undefined {
  const original = parts.find((p) => p.type === 'message/rfc822' || p.type === 'text/rfc822-headers' || p.type === 'message/rfc822-headers');
  return original ? entity(original.body).headers.get('message-id') : undefined;
}

/** The report a raw message is, or undefined when it is none (or one this parser cannot read). */
export function readReport(raw: Buffer): Report | undefined {
  // Most mail to a receiving domain is no report: a glance at its start spares decoding all of it.
  if (!/^content-type:\s*multipart\/report/im.test(raw.subarray(0, 64 * 1024).toString('latin1'))) return undefined;
  const { headers, body, parts } = reportParts(raw.toString('utf8'));
  // Without a Message-ID, its body: the headers differ each time it arrives (our own Received line).
  const receipt = headers.get('message-id') || `sha256:${createHash('sha256').update(body).digest('hex')}`;
  const status = parts.find((p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status');
  if (status) {
    const blocks = status.body.split(/\r?\n[ \t]*\r?\n/).filter((block) => block.trim() !== '');
    // The first block speaks of the message (Reporting-MTA); every further one of a recipient.
    const recipients = blocks.slice(1).map(fieldsOf).map((f) => ({
      address: typedAddress(f.get('final-recipient')) ?? typedAddress(f.get('original-recipient')),
      action: (f.get('action') ?? '').toLowerCase(),
      status: f.get('status')?.match(/^[245]\.\d{1,3}\.\d{1,3}/)?.[0],
      diagnostic: f.get('diagnostic-code'),
    }));
    return recipients.length > 0 ? { kind: 'dsn', receipt, originalMessageId: originalMessageId(parts), recipients } : undefined;
  }
  const feedback = parts.find((p) => p.type === 'message/feedback-report');
  if (feedback) {
    const f = fieldsOf(feedback.body);
    return { kind: 'complaint', receipt, originalMessageId: originalMessageId(parts), feedbackType: (f.get('feedback-type') ?? '').toLowerCase(), originalRecipient: typedAddress(f.get('original-rcpt-to')) };
  }
  return undefined;
}
