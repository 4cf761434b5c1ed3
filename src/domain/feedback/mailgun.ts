import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { mailgunOutcome } from '../outcomes/outcomes.ts';
import { field, parseJson, text } from './json-fields.ts';
import type { Notification } from './record-feedback.ts';

// Mailgun's webhooks: `signature` {timestamp, token, signature}, the HMAC-SHA256 of timestamp and token
// under the webhook signing key; `event-data` the event (failed, complained, delivered).

/** A signature older (or newer) than this is refused: a replay, or a clock far off. */
export const MAILGUN_MAX_AGE_MS = 15 * 60_000;

function checkSignature(ctx: Context, key: string, signature: unknown): void {
  const timestamp = text(field(signature, 'timestamp'), 20);
  const token = text(field(signature, 'token'), 200);
  const given = text(field(signature, 'signature'), 200);
  if (!timestamp || !token || !given) throw new AppError('missing_signature', 'The Mailgun webhook has no signature (timestamp, token and signature).');
  const expected = createHmac('sha256', key).update(timestamp + token).digest();
  const sent = Buffer.from(given, 'hex');
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw new AppError('invalid_signature', 'The Mailgun signature does not verify with FEEDBACK_MAILGUN_KEY.');
  if (!(Math.abs(ctx.clock.now() - Number(timestamp) * 1000) <= MAILGUN_MAX_AGE_MS)) throw new AppError('invalid_signature', 'The Mailgun signature is stale: its timestamp is more than 15 minutes away.');
}

/** Reads one Mailgun webhook: its event, for the recipient it names. */
export function readMailgun(ctx: Context, key: string, body: Buffer | undefined): Notification[] {
  const hook = parseJson(body, 'a Mailgun webhook');
  checkSignature(ctx, key, field(hook, 'signature'));
  const event = field(hook, 'event-data');
  const id = text(field(event, 'id'), 200);
  const name = text(field(event, 'event'));
  if (!id || !name) throw new AppError('validation_error', 'The Mailgun webhook has no event-data with an id and an event.');
  const status = field(event, 'delivery-status');
  const detail = [text(field(status, 'code'), 10), text(field(status, 'message')) || text(field(status, 'description'))].filter(Boolean).join(' ');
  const recipient = text(field(event, 'recipient'), 320);
  const reading = { event: name, severity: text(field(event, 'severity')), status: text(field(status, 'enhanced-code'), 32), detail };
  const outcome = recipient ? mailgunOutcome(reading, recipient) : undefined;
  const messageId = text(field(field(field(event, 'message'), 'headers'), 'message-id'), 1000);
  return [{ receipt: id, providerId: undefined, messageId: messageId && `<${messageId.replace(/^<|>$/g, '')}>`, outcomes: outcome ? [outcome] : [] }];
}
