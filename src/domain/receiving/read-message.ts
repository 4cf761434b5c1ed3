import { authenticate } from 'mailauth';
import { simpleParser, type AddressObject, type HeaderLines } from 'mailparser';
import { AppError, clip } from '../../errors.ts';
import type { Authentication } from '../../store/received-emails.ts';
import { readReport, type Report } from '../bounces/report.ts';
import type { Resolve } from './dns-cache.ts';
import type { Mailbox } from '../recipients/addresses.ts';

// What a message says (mailparser) and, for a received one, whether its sender is who it claims
// (mailauth: SPF, DKIM, DMARC) and whether it is a bounce or complaint report. Pure: the reader thread
// runs it beside the event loop. What cannot be read is refused for good (554 5.6.0): the sender's
// retries would read the same bytes.

/** How the message came: the SMTP session's facts SPF and the stored row need. */
export interface Envelope {
  /** MAIL FROM; empty for a bounce. */
  from: string;
  /** RCPT TO, as accepted. */
  to: string[];
  clientAddress: string;
  helo: string;
}

export interface ReadAttachment {
  filename: string | null;
  content_type: string;
  content_disposition: string | null;
  /** Without angle brackets, as `cid:` links name it. */
  content_id: string | null;
  content: Uint8Array;
}


/** What a message says, by mailparser: the parts both receiving and SMTP submission need. */
export interface ParsedMessage {
  from: Mailbox[];
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  reply_to: Mailbox[];
  subject: string;
  message_id: string;
  /** With `cid:` links kept; the API may turn them into data URIs. */
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: ReadAttachment[];
}

/** A received message as stored: bare addresses, and whether its sender is who it claims. */
export interface ReadMessage extends Omit<ParsedMessage, 'from' | 'to' | 'cc' | 'bcc' | 'reply_to'> {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  authentication: Authentication;
  /** The bounce or complaint report it is, if any (bounces/report.ts). */
  report: Report | undefined;
}

/** The most a message's header block may hold: mailparser reads no more than 1 MB of it anyway. */
export const MAX_HEADER_BYTES = 1024 * 1024;
/** The most lines it may have: mailauth reads a header in time that grows with the square of its lines. */
export const MAX_HEADER_LINES = 5000;

/**
 * Refuses a message whose header block passes MAX_HEADER_BYTES or MAX_HEADER_LINES (552 5.3.4), before
 * any parser reads it. One pass of native searches over at most a megabyte.
 */
export function checkHeaderSize(raw: Buffer): void {
  const end = Math.min(raw.length, MAX_HEADER_BYTES + 4);
  let lines = 0;
  for (let at = raw.indexOf(10); at !== -1 && at < end; at = raw.indexOf(10, at + 1)) {
    // A blank line ends the header block.
    if (raw[at + 1] === 10 || (raw[at + 1] === 13 && raw[at + 2] === 10)) return;
    if (++lines > MAX_HEADER_LINES) break;
  }
  if (lines <= MAX_HEADER_LINES && raw.length <= MAX_HEADER_BYTES) return;
  throw new AppError('payload_too_large', `Message header too large: at most ${MAX_HEADER_LINES} lines and ${MAX_HEADER_BYTES / 1024 / 1024} MB.`);
}

/** Runs a library's reading of the message: whatever it throws is the message's fault, and final. */
async function unreadable<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new AppError('validation_error', `The message cannot be read: ${clip(String((error as Error).message ?? error))}`);
  }
}

/** The mailboxes of a header, groups flattened; a display name as decoded, undefined when none. */
function mailboxes(header: AddressObject | AddressObject[] | undefined): Mailbox[] {
  const entries = [header ?? []].flat().flatMap((object) => object.value);
  return entries
    .flatMap((entry) => (entry.group ? entry.group : [entry]))
    .flatMap((entry) => (entry.address ? [{ name: entry.name || undefined, address: entry.address }] : []));
}

const addresses = (list: Mailbox[]) => list.map((m) => m.address);

/**
 * The headers as the API shows them: lower-case names, each value unfolded as it arrived (encoded
 * words kept); a repeated header's values joined by a line break, first to last.
 */
function headerMap(lines: HeaderLines): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of lines) {
    const value = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
    headers[key] = key in headers ? `${headers[key]}\n${value}` : value;
  }
  return headers;
}

/** The verdict of DKIM over every signature: pass when one passes, else the first one's, `none` without any. */
function dkimVerdict(results: { status: { result: string } }[]): string {
  if (results.some((r) => r.status.result === 'pass')) return 'pass';
  return results[0]?.status.result ?? 'none';
}

/**
 * Parses a message (mailparser); pure, so that a thread can run it. `textFromHtml`: a message with html
 * and no text part gets a text made from its html (received mail); else its text is what it has.
 */
export async function parseMessage(raw: Buffer, textFromHtml = false): Promise<ParsedMessage> {
  checkHeaderSize(raw);
  return parseChecked(raw, textFromHtml);
}

async function parseChecked(raw: Buffer, textFromHtml: boolean): Promise<ParsedMessage> {
  const parsed = await unreadable(() => simpleParser(raw, { keepCidLinks: true, skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: !textFromHtml }));
  return {
    from: mailboxes(parsed.from),
    to: mailboxes(parsed.to),
    cc: mailboxes(parsed.cc),
    bcc: mailboxes(parsed.bcc),
    reply_to: mailboxes(parsed.replyTo),
    subject: parsed.subject ?? '',
    message_id: parsed.messageId ?? '',
    html: parsed.html === false ? null : (parsed.html ?? null),
    // Without a text part mailparser gives '' when told not to make one from the html.
    text: !textFromHtml && parsed.text === '' ? null : (parsed.text ?? null),
    headers: headerMap(parsed.headerLines),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.contentType,
      content_disposition: a.contentDisposition ?? null,
      content_id: a.cid ?? null,
      content: a.content,
    })),
  };
}

/** Parses and authenticates a received message (SPF, DKIM and DMARC by mailauth), and reads the report it is. */
export async function readMessage(raw: Buffer, envelope: Envelope, resolve: Resolve, mta: string): Promise<ReadMessage> {
  checkHeaderSize(raw);
  const [parsed, auth] = await Promise.all([
    parseChecked(raw, true),
    unreadable(() =>
      authenticate(raw, {
        ip: envelope.clientAddress,
        helo: envelope.helo,
        sender: envelope.from,
        mta,
        disableArc: true,
        disableBimi: true,
        resolver: resolve as (name: string, type: string) => Promise<never>,
      }),
    ),
  ]);
  return {
    ...parsed,
    from: addresses(parsed.from)[0] ?? '',
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    bcc: addresses(parsed.bcc),
    reply_to: addresses(parsed.reply_to),
    authentication: {
      spf: auth.spf ? auth.spf.status.result : 'none',
      dkim: dkimVerdict(auth.dkim.results),
      dmarc: auth.dmarc ? auth.dmarc.status.result : 'none',
    },
    report: readReport(raw),
  };
}
