import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { AppError } from '../../errors.ts';
import { sendgridOutcome } from '../outcomes/outcomes.ts';
import { field, items, parseJson, text, verifies } from './json-fields.ts';
import type { Notification } from './record-feedback.ts';

// SendGrid's Signed Event Webhook: an ECDSA (P-256, SHA-256) signature over the timestamp and the raw
// body, in X-Twilio-Email-Event-Webhook-Signature and -Timestamp; the body a list of events.

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** The verification key FEEDBACK_SENDGRID_KEY holds (config.ts checked it). */
export const sendgridKey = (base64: string): KeyObject => createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });

/** A list of SendGrid events is at most this long (SendGrid posts batches well under it). */
const MAX_EVENTS = 10_000;

/** Reads a SendGrid post once its signature verifies: each event a notification of its own. */
export function readSendgrid(key: KeyObject, headers: { signature: string | undefined; timestamp: string | undefined }, body: Buffer | undefined): Notification[] {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp) throw new AppError('missing_signature', 'The SendGrid post has no signature (X-Twilio-Email-Event-Webhook-Signature and -Timestamp).');
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), body ?? Buffer.alloc(0)]);
  if (!verifies(() => verify('sha256', signed, key, Buffer.from(signature, 'base64')))) throw new AppError('invalid_signature', 'The SendGrid signature does not verify with FEEDBACK_SENDGRID_KEY.');
  const events = parseJson(body, 'a list of SendGrid events');
  if (!Array.isArray(events)) throw new AppError('validation_error', 'The body is not a list of SendGrid events.');
  if (events.length > MAX_EVENTS) throw new AppError('validation_error', `The body holds more than ${MAX_EVENTS} events.`);
  return items(events).flatMap((event) => {
    const receipt = text(field(event, 'sg_event_id'), 200);
    const name = text(field(event, 'event'));
    const recipient = text(field(event, 'email'), 320);
    if (!receipt || !name || !recipient) return [];
    const reading = { event: name, type: text(field(event, 'type')), status: text(field(event, 'status'), 32), reason: text(field(event, 'reason')) ?? text(field(event, 'response')) };
    const outcome = sendgridOutcome(reading, recipient);
    // sg_message_id is the id SendGrid's 250 gave, a filter's suffix after its first dot.
    const providerId = text(field(event, 'sg_message_id'), 400)?.split('.')[0];
    return [{ receipt, providerId, messageId: text(field(event, 'smtp-id')), outcomes: outcome ? [outcome] : [] }];
  });
}
