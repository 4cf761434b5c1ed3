import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, missingField } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { AttachmentRow, EmailRows } from '../../store/emails.ts';
import { applyTemplate } from '../templates/apply-template.ts';
import { domainOf, formatMailbox, parseMailbox, parseMailboxList, type Mailbox } from '../recipients/addresses.ts';
import { loadAttachments } from './attachments.ts';
import { parseScheduledAt } from './schedule.ts';
import { topicRefusals } from '../recipients/policy.ts';
import { newEmailRows } from './new-email.ts';
import { checkSenderDomain, type SenderKey } from '../sending-domains/sender-domain.ts';
import { checkTags } from './tags.ts';

/** One attachment as a send gives it: its bytes (base64, or byte values), or a URL to fetch them from. */
export interface AttachmentInput {
  content?: string | number[];
  path?: string;
  filename?: string;
  content_type?: string;
  content_id?: string;
  /** Resend's newer name for content_id. */
  inline_content_id?: string;
}

/**
 * What a send asks for, as POST /emails (and each batch entry) takes it; every edge that sends (the HTTP
 * API, SMTP submission) maps its input onto this.
 */
export interface SendEmailInput {
  from?: string;
  to: string | string[];
  subject?: string;
  cc?: string | string[];
  bcc?: string | string[];
  reply_to?: string | string[];
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  tags?: { name: string; value?: string }[];
  attachments?: AttachmentInput[];
  scheduled_at?: string;
  template?: { id: string; variables?: Record<string, string | number> };
  topic_id?: string;
}

/** An email that passed every rule, as the rows to store and the time its job is due. */
export interface PreparedEmail extends EmailRows {
  runAt: number;
}

// Headers Mailroom writes itself from the payload's fields; setting them twice would corrupt the message.
const RESERVED_HEADERS = new Set([
  'from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'date', 'message-id',
  'mime-version', 'content-type', 'content-transfer-encoding',
]);
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]{1,100}$/;

function checkHeaders(headers: Record<string, string> | undefined): Record<string, string> | null {
  if (headers === undefined || Object.keys(headers).length === 0) return null;
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw invalidField(`headers.${name}`, 'a header name is printable ASCII without ":" or spaces.');
    // A Sender would show a second author, one no rule on `from` checks (a key bound to a domain).
    if (name.toLowerCase() === 'sender') throw invalidField(`headers.${name}`, 'the `from` field says who sends an email; a Sender header is not accepted.');
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw invalidField(`headers.${name}`, 'this header is set from the email fields; use those instead.');
    }
    if (/[\r\n\0]/.test(value)) throw invalidField(`headers.${name}`, 'a header value must not contain line breaks.');
    if (value.length > 2000) throw invalidField(`headers.${name}`, 'a header value is at most 2000 characters.');
  }
  return headers;
}

/** The bare addresses of the envelope: to, cc and bcc, each once (compared without case). */
function envelopeRecipients(mailboxes: Mailbox[]): string[] {
  const seen = new Map<string, string>();
  for (const { address } of mailboxes) {
    if (!seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address);
  }
  return [...seen.values()];
}


/**
 * A message submitted whole (SMTP submission): its recipients are its envelope, and its source is sent
 * as it is, so the payload's fields only describe it (from, to, cc, subject, bodies, as parsed).
 */
export interface Submitted {
  id: string;
  source: Buffer;
  envelope: string[];
  messageId: string;
  attachments: Omit<AttachmentRow, 'email_id'>[];
}

/**
 * Checks a send payload against every rule of POST /emails and turns it into rows. A template is
 * applied first, so that it can give from, subject, reply_to and the bodies. Remote attachments are
 * fetched here, so an accepted email never depends on a URL staying up. A submitted message passes the
 * same rules (sender domain, topic, schedule, tags); only what makes its bytes differs.
 */
export async function prepareEmail(ctx: Context, payload: SendEmailInput, key: SenderKey, submitted?: Submitted): Promise<PreparedEmail> {
  const { input, templateId } =
    payload.template === undefined ? { input: payload, templateId: null } : await applyTemplate(ctx, key.project_id, payload, payload.template);
  if (input.from === undefined) throw missingField('from');
  if (input.subject === undefined) throw missingField('subject');
  if (input.html === undefined && input.text === undefined && !submitted) throw missingField('html` or `text');

  const from = parseMailbox(input.from, 'from');
  await checkSenderDomain(ctx, from.address, key);
  const to = parseMailboxList(input.to, 'to');
  if (to.length === 0 && !submitted) throw missingField('to');
  const cc = parseMailboxList(input.cc, 'cc');
  const bcc = parseMailboxList(input.bcc, 'bcc');
  const replyTo = parseMailboxList(input.reply_to, 'reply_to');
  const headers = checkHeaders(input.headers);
  const tags = checkTags(input.tags);
  const now = ctx.clock.now();
  const runAt = input.scheduled_at === undefined ? now : parseScheduledAt(input.scheduled_at, now);

  const id = submitted?.id ?? newId();
  const envelope = submitted?.envelope ?? envelopeRecipients([...to, ...cc, ...bcc]);
  const topic = await topicRefusals(ctx, key.project_id, input.topic_id, envelope);
  const attachments = submitted
    ? submitted.attachments.map((a) => ({ ...a, email_id: id }))
    : await loadAttachments(id, input.attachments ?? [], ctx.config.allowPrivateAttachmentUrls);
  const rows = newEmailRows(
    {
      projectId: key.project_id,
      id,
      from: formatMailbox(from),
      fromDomain: domainOf(from.address),
      messageId: submitted?.messageId,
      to: to.map(formatMailbox),
      cc: cc.map(formatMailbox),
      bcc: bcc.map(formatMailbox),
      replyTo: replyTo.map(formatMailbox),
      envelope,
      // Line breaks in a subject would end the header: fold them to spaces, as mail clients do.
      subject: input.subject.replace(/[\r\n]+/g, ' '),
      html: input.html ?? null,
      text: input.text ?? null,
      headers,
      tags,
      scheduledAt: input.scheduled_at === undefined ? null : toTimestamp(runAt),
      templateId,
      topicId: topic.topicId,
      broadcastId: null,
      personalization: null,
      // A recipient the topic does not allow has failed already; nobody allowed: the email has failed.
      events: [...topic.blocked].map(([recipient, reason]) => ({ recipient, types: ['failed'], response: reason })),
    },
    toTimestamp(now),
  );
  return { runAt, ...rows, attachments, ...(submitted ? { source: submitted.source } : {}) };
}
