import { createHash } from 'node:crypto';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { asBuffer } from '../../threads.ts';
import type { Tag } from '../../store/emails.ts';
import type { ApiKeyRow } from '../../store/api-keys.ts';
import { domainOf, formatMailbox, MAX_ADDRESSES_PER_FIELD, parseMailbox } from '../recipients/addresses.ts';
import { prepareEmail, type SendEmailInput, type Submitted } from './email-input.ts';
import { storeEmails } from './emails.ts';
import { fieldValue, joinMessage, splitMessage, type SplitMessage } from './header-block.ts';
import { checkIdempotencyKey, runIdempotent, type IdempotentRequest } from './idempotency.ts';
import { newMessageId } from './new-email.ts';
import { checkShownSenders } from './shown-sender.ts';
import { checkTags } from './tags.ts';

// SMTP submission: a whole message, its envelope and the API key that authenticated it, made into the
// same email as POST /emails makes (prepareEmail, storeEmails), its bytes sent as they came.

/** The headers that instruct Mailroom: read, then removed from the message (with Bcc, which only the envelope carries). */
export const CONTROL_HEADERS = {
  idempotencyKey: ['resend-idempotency-key', 'idempotency-key'],
  tags: 'x-mailroom-tags',
  topicId: 'x-mailroom-topic-id',
  scheduledAt: 'x-mailroom-scheduled-at',
} as const;

const REMOVED = new Set<string>(['bcc', ...CONTROL_HEADERS.idempotencyKey, CONTROL_HEADERS.tags, CONTROL_HEADERS.topicId, CONTROL_HEADERS.scheduledAt]);

/** `X-Mailroom-Tags: name=value, name2=value2`: Resend's tags, a value optional, under Resend's rule (tags.ts). */
function parseTags(header: string | undefined): Tag[] | undefined {
  if (header === undefined) return undefined;
  const tags = header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const equals = entry.indexOf('=');
      return equals === -1 ? { name: entry } : { name: entry.slice(0, equals).trim(), value: entry.slice(equals + 1).trim() };
    });
  return checkTags(tags, 'X-Mailroom-Tags') ?? undefined;
}

/** The same message submitted twice hashes the same: what it says, not its bytes (a client's boundaries, Date and Message-ID change on a retry). */
function contentHash(input: SendEmailInput, envelope: string[], attachments: Submitted['attachments']): string {
  const hash = createHash('sha256').update(JSON.stringify([input, envelope]));
  for (const a of attachments) hash.update(JSON.stringify([a.filename, a.content_type, a.content_id])).update(a.content);
  return hash.digest('hex');
}

/**
 * Accepts a message submitted over SMTP by `key` for the envelope's recipients: the rules of POST
 * /emails (prepareEmail), applied to every sender it shows (From and Sender), the control headers read
 * and removed, a Message-ID and a Date added when missing, then the email, its source and its job
 * stored in one transaction (once per Idempotency-Key). Resolves with the email's id once committed.
 */
export async function submitEmail(ctx: Context, raw: Buffer, rcptTo: string[], key: Pick<ApiKeyRow, 'id' | 'domain_id' | 'project_id'>): Promise<{ id: string }> {
  const envelope = [...new Map(rcptTo.map((to) => parseMailbox(to, 'RCPT TO').address).map((a) => [a.toLowerCase(), a])).values()];
  if (envelope.length > MAX_ADDRESSES_PER_FIELD) {
    throw new AppError('validation_error', `Too many recipients: at most ${MAX_ADDRESSES_PER_FIELD} per email, got ${envelope.length}.`);
  }
  const message = splitMessage(raw);
  const parsed = await ctx.reader.parse(raw);
  const from = parsed.from[0];
  if (!from) throw new AppError('missing_required_field', 'The message has no From header.');
  await checkShownSenders(ctx, parsed, key);
  const control = (name: string) => fieldValue(message, name);
  const idempotencyKey = CONTROL_HEADERS.idempotencyKey.map(control).find((value) => value !== undefined);
  const input: SendEmailInput = {
    from: formatMailbox(from),
    to: parsed.to.map(formatMailbox),
    cc: parsed.cc.map(formatMailbox),
    reply_to: parsed.reply_to.map(formatMailbox),
    subject: parsed.subject,
    ...(parsed.html === null ? {} : { html: parsed.html }),
    ...(parsed.text === null ? {} : { text: parsed.text }),
    tags: parseTags(control(CONTROL_HEADERS.tags)),
    topic_id: control(CONTROL_HEADERS.topicId),
    scheduled_at: control(CONTROL_HEADERS.scheduledAt),
  };
  const shown = new Set([...parsed.to, ...parsed.cc].map((m) => m.address.toLowerCase()));
  // Bcc is the envelope's recipients the headers do not show.
  input.bcc = envelope.filter((address) => !shown.has(address.toLowerCase()));
  const attachments = parsed.attachments.map((a, position) => ({
    position,
    filename: a.filename,
    content_type: a.content_type,
    content_id: a.content_id,
    content: asBuffer(a.content),
  }));
  const idempotent: IdempotentRequest | undefined =
    idempotencyKey === undefined
      ? undefined
      : { apiKeyId: key.id, endpoint: 'SMTP', key: checkIdempotencyKey(idempotencyKey), requestHash: contentHash(input, envelope, attachments) };

  return runIdempotent(ctx, idempotent, async (record) => {
    const id = newId();
    const { source, messageId } = sourceOf(message, id, domainOf(from.address), new Date(ctx.clock.now()));
    const prepared = await prepareEmail(ctx, input, key, { id, source, envelope, messageId, attachments });
    const response = { id };
    await storeEmails(ctx, [prepared], record?.(response));
    return response;
  });
}

/** The message as it is sent: without the control headers and Bcc, with a Message-ID and a Date when it had none. */
function sourceOf(message: SplitMessage, id: string, fromDomain: string, now: Date): { source: Buffer; messageId: string } {
  const added: string[] = [];
  let messageId = fieldValue(message, 'message-id');
  if (!messageId) {
    messageId = newMessageId(id, fromDomain);
    added.push(`Message-ID: ${messageId}`);
  }
  if (fieldValue(message, 'date') === undefined) added.push(`Date: ${now.toUTCString().replace('GMT', '+0000')}`);
  const kept = message.fields.filter((f) => !REMOVED.has(f.name));
  return { source: joinMessage(added, kept, message.rest), messageId };
}
