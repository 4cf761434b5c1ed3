import { verify } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { FeedbackSes } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { sesOutcome, type RecipientOutcome, type SesReading } from '../outcomes/outcomes.ts';
import { field, items, parseJson, text, verifies } from './json-fields.ts';
import type { Notification } from './record-feedback.ts';
import { snsUrl, type SnsFetcher } from './sns-fetch.ts';

// Amazon SES notifications, as SNS posts them: each message signed (SignatureVersion 1, SHA1withRSA; 2,
// SHA256withRSA) over SNS's canonical string, with the certificate at SigningCertURL; the SES
// notification is the JSON in its Message.

/** The fields each message type signs, in this order; Subject only when the message has one. */
const SIGNED: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

const ALGORITHMS: Record<string, string> = { '1': 'sha1', '2': 'sha256' };

/** SNS's string to sign: each field's name and value, a line each. */
function canonical(message: unknown, type: string): string | undefined {
  let signed = '';
  for (const name of SIGNED[type]!) {
    const value = text(field(message, name), Infinity);
    if (value === undefined && name === 'Subject') continue;
    if (value === undefined) return undefined;
    signed += `${name}\n${value}\n`;
  }
  return signed;
}

/** Verifies an SNS message's signature; throws 401/403 when it is missing or does not verify. */
async function verifySns(fetcher: SnsFetcher, settings: FeedbackSes, message: unknown, type: string): Promise<void> {
  const signature = text(field(message, 'Signature'), 4096);
  const algorithm = ALGORITHMS[text(field(message, 'SignatureVersion')) ?? ''];
  const signed = canonical(message, type);
  if (!signature || !algorithm || signed === undefined) throw new AppError('missing_signature', 'The SNS message is not signed (Signature, SignatureVersion 1 or 2, and the fields it signs).');
  const certUrl = snsUrl(text(field(message, 'SigningCertURL')), settings.certHost);
  if (!certUrl || !certUrl.pathname.endsWith('.pem')) throw new AppError('invalid_signature', 'The SNS SigningCertURL is not an https .pem URL of an SNS host.');
  const key = await fetcher.signingKey(certUrl);
  if (!verifies(() => verify(algorithm, Buffer.from(signed, 'utf8'), key, Buffer.from(signature, 'base64')))) throw new AppError('invalid_signature', 'The SNS signature does not verify.');
}

/** The Message-ID the original message had: SES's commonHeaders, else the header among mail.headers. */
function messageIdOf(mail: unknown): string | undefined {
  const common = text(field(field(mail, 'commonHeaders'), 'messageId'));
  if (common) return common;
  const header = items(field(mail, 'headers')).find((h) => text(field(h, 'name'))?.toLowerCase() === 'message-id');
  return text(field(header, 'value'));
}

/** Each recipient's outcome in an SES notification (Bounce, Complaint, Delivery, DeliveryDelay). */
function outcomesOf(ses: unknown, kind: string): RecipientOutcome[] {
  const read = (recipient: unknown, reading: Omit<SesReading, 'kind'>) => {
    const address = text(typeof recipient === 'string' ? recipient : field(recipient, 'emailAddress'), 320);
    const outcome = address ? sesOutcome({ kind, ...reading }, address) : undefined;
    return outcome ? [outcome] : [];
  };
  const part = (name: string) => field(ses, name);
  const of = (recipient: unknown) => ({ status: text(field(recipient, 'status'), 32), diagnostic: text(field(recipient, 'diagnosticCode')) });
  if (kind === 'Bounce') {
    const bounceType = text(field(part('bounce'), 'bounceType'));
    const bounceSubType = text(field(part('bounce'), 'bounceSubType'));
    return items(field(part('bounce'), 'bouncedRecipients')).flatMap((r) => read(r, { bounceType, bounceSubType, ...of(r) }));
  }
  if (kind === 'Complaint') {
    const feedbackType = text(field(part('complaint'), 'complaintFeedbackType')) ?? 'abuse';
    return items(field(part('complaint'), 'complainedRecipients')).flatMap((r) => read(r, { feedbackType }));
  }
  if (kind === 'DeliveryDelay') return items(field(part('deliveryDelay'), 'delayedRecipients')).flatMap((r) => read(r, of(r)));
  if (kind === 'Delivery') {
    const smtpResponse = text(field(part('delivery'), 'smtpResponse'));
    return items(field(part('delivery'), 'recipients')).flatMap((r) => read(r, { smtpResponse }));
  }
  return [];
}

/**
 * Reads what SNS posted, once its signature verifies and its topic is allowed: a Notification's SES
 * notification, or nothing (a SubscriptionConfirmation is confirmed here, by fetching its SubscribeURL).
 */
export async function readSes(ctx: Context, fetcher: SnsFetcher, settings: FeedbackSes, body: Buffer | undefined): Promise<Notification[]> {
  const message = parseJson(body, 'an SNS message');
  const type = text(field(message, 'Type')) ?? '';
  if (!SIGNED[type]) throw new AppError('validation_error', 'The body is not an SNS message: Type is not Notification, SubscriptionConfirmation or UnsubscribeConfirmation.');
  await verifySns(fetcher, settings, message, type);
  const topic = text(field(message, 'TopicArn'))!;
  if (settings.topics !== '*' && !settings.topics.includes(topic)) throw new AppError('invalid_signature', 'The SNS topic is not one FEEDBACK_SES_TOPICS names.');
  if (type === 'SubscriptionConfirmation') {
    const url = snsUrl(text(field(message, 'SubscribeURL'), 4096), settings.certHost);
    if (!url) throw new AppError('validation_error', 'The SubscribeURL is not an https URL of an SNS host.');
    await fetcher.confirm(url);
    ctx.log.info({ topic }, 'SNS subscription confirmed');
    return [];
  }
  if (type === 'UnsubscribeConfirmation') return [];
  // Anything else on the topic (a test message) is no SES notification: it records nothing.
  let ses: unknown;
  try {
    ses = JSON.parse(text(field(message, 'Message'), Infinity)!) as unknown;
  } catch {
    ses = undefined;
  }
  const kind = text(field(ses, 'notificationType')) ?? text(field(ses, 'eventType')) ?? '';
  const mail = field(ses, 'mail');
  return [{ receipt: text(field(message, 'MessageId'))!, providerId: text(field(mail, 'messageId'), 200), messageId: messageIdOf(mail), outcomes: outcomesOf(ses, kind) }];
}
