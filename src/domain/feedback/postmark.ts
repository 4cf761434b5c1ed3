import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';
import { postmarkOutcome } from '../outcomes/outcomes.ts';
import { field, parseJson, text } from './json-fields.ts';
import type { Notification } from './record-feedback.ts';

// Postmark's webhooks (Bounce, SpamComplaint, Delivery), authenticated as Postmark documents: HTTP
// basic auth, the credentials written in the webhook URL registered with it.

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Checks the request's basic credentials against FEEDBACK_POSTMARK_AUTH, in constant time. */
function checkCredentials(authorization: string | undefined, expected: string): void {
  const given = authorization?.match(/^Basic\s+([A-Za-z0-9+/=]{1,1024})\s*$/i)?.[1];
  if (given === undefined) throw new AppError('missing_signature', 'Postmark webhooks authenticate with HTTP basic auth: register the URL with its credentials.');
  // Hashes of equal length, so the comparison takes the same time whatever was sent.
  if (!timingSafeEqual(digest(Buffer.from(given, 'base64').toString('utf8')), digest(expected))) throw new AppError('invalid_signature', 'The basic auth credentials are not the ones FEEDBACK_POSTMARK_AUTH holds.');
}

/** Reads one Postmark webhook: its record, for the one recipient it names. */
export function readPostmark(credentials: string, authorization: string | undefined, body: Buffer | undefined): Notification[] {
  checkCredentials(authorization, credentials);
  const record = parseJson(body, 'a Postmark webhook');
  const recordType = text(field(record, 'RecordType'));
  if (!recordType) throw new AppError('validation_error', 'The body is not a Postmark webhook: it has no RecordType.');
  const providerId = text(field(record, 'MessageID'), 200);
  const recipient = text(field(record, recordType === 'Delivery' ? 'Recipient' : 'Email'), 320);
  const outcome = recipient ? postmarkOutcome({ recordType, type: text(field(record, 'Type')), details: text(field(record, 'Details')) }, recipient) : undefined;
  // A Delivery has no ID of its own: its message and recipient name it.
  const receipt = `${recordType} ${text(field(record, 'ID')) ?? `${providerId ?? ''} ${recipient ?? ''}`}`;
  return [{ receipt, providerId, messageId: undefined, outcomes: outcome ? [outcome] : [] }];
}
