import { statusOf } from '../../delivery/smtp-reply.ts';
import type { SmtpStage } from '../../delivery/smtp-send.ts';
import { EMAIL_STATES, type EmailState } from '../events/email-events.ts';

// The one reading of what happened to a recipient, whichever way it came back (an SMTP answer of the
// relay or a recipient's server, a test address, a DSN or an ARF report), and what follows from it.

/**
 * What a recipient's SMTP answer means for it: `failed` is final without being a bounce (the relay or
 * the server refused us, not the recipient).
 */
export type Verdict = 'delivered' | 'deferred' | 'bounced' | 'failed';

/** Whom a refusal is about: the sender (our login, envelope sender, or the relay's policy), the recipient's mailbox, or the message. */
export type Concern = 'sender' | 'recipient' | 'message';

/** A refusal's wording that names the sender, the login or the relay's policy rather than a mailbox (Postfix, Exchange, Gmail, SES). */
const ABOUT_SENDER = /relay(?:ing)? (?:access )?(?:denied|not permitted)|sender|send ?as|envelope from|from address|not (?:authori[sz]ed|allowed|permitted) to (?:send|relay)|authenticat|unverified|not verified|identity/i;

/**
 * Whom a refusal is about, by the command it answered (table in docs/bounces.md, a test per row):
 * the connection, AUTH and MAIL FROM are about the sender; RCPT TO is about the recipient unless its
 * wording names the sender or the relay's policy ("Relay access denied"); DATA is about the sender
 * when its wording says so, about the recipient when its status is an address or mailbox status
 * (X.1.*, X.2.*), else about the message (content, size, spam).
 */
export function concernOf(answer: { stage?: SmtpStage; response: string }): Concern {
  const { stage = 'data', response } = answer;
  if (stage === 'connection' || stage === 'auth' || stage === 'mail') return 'sender';
  if (ABOUT_SENDER.test(response)) return 'sender';
  if (stage === 'rcpt') return 'recipient';
  return /^[245]\.[12]\./.test(statusOf(response) ?? '') ? 'recipient' : 'message';
}

/**
 * What an SMTP answer means, for the relay, direct delivery and the test addresses alike: accepted is
 * delivered; a 5xx is final: a bounce, unless it is about the sender, then the email failed; anything
 * else, a 4xx or no answer at all (a lost connection), is deferred: worth another try.
 */
export function classify(answer: { accepted: boolean; code: number | undefined; stage?: SmtpStage; response: string }): Verdict {
  if (answer.accepted) return 'delivered';
  if (answer.code === undefined || answer.code < 500) return 'deferred';
  return concernOf(answer) === 'sender' ? 'failed' : 'bounced';
}

/** The events a verdict records for a recipient; a deferral records `failed` once the attempts have run out. */
export function eventsOf(verdict: Verdict, exhausted: boolean): EmailState[] {
  if (verdict === 'delivered') return ['sent', 'delivered'];
  if (verdict === 'bounced') return ['bounced'];
  if (verdict === 'failed') return ['failed'];
  return [exhausted ? 'failed' : 'delivery_delayed'];
}

/** Resend's bounce types: Permanent (5xx), Transient (4xx), Undetermined (no status to go by). */
export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';

/** Resend's bounce subtypes that an answer's enhanced status code can give (docs/bounces.md has the table). */
export type BounceSubType = 'General' | 'NoEmail' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' | 'AttachmentRejected' | 'MessageRejected' | 'Undetermined';

/** By enhanced status code (RFC 3463), class digit left out: 5.1.1 and 4.1.1 alike; the rest is General. */
const SUB_TYPES: Record<string, BounceSubType> = {
  '1.0': 'NoEmail', // other address status
  '1.1': 'NoEmail', // bad destination mailbox
  '1.2': 'NoEmail', // bad destination system
  '1.3': 'NoEmail', // bad destination mailbox syntax
  '1.6': 'NoEmail', // mailbox moved
  '1.10': 'NoEmail', // null MX
  '2.1': 'NoEmail', // mailbox disabled
  '2.2': 'MailboxFull',
  '2.3': 'MessageTooLarge', // message longer than the mailbox allows
  '3.4': 'MessageTooLarge',
  '6.0': 'ContentRejected', // other media error
  '6.1': 'AttachmentRejected', // media not supported
  '7.1': 'MessageRejected', // delivery not authorized, message refused (policy, spam)
};

/** What a bounce answer (or a DSN's status and diagnostic) says of the bounce: its type and subtype. */
export function bounceOf(text: string): { type: BounceType; subType: BounceSubType } {
  const status = statusOf(text);
  if (!status || status.startsWith('2')) return { type: 'Undetermined', subType: 'Undetermined' };
  const subType = SUB_TYPES[status.slice(2)] ?? 'General';
  return { type: status.startsWith('5') ? 'Permanent' : 'Transient', subType };
}

/**
 * What came of one recipient, whichever way it came back: the events it records, the answer, whether a
 * bounce is final, and whether it is proof enough to act on (a real server's answer, or a report to the
 * VERP address signed for this recipient; not a test address, nor a report matched by Message-ID).
 */
export interface RecipientOutcome {
  recipient: string;
  types: EmailState[];
  response: string;
  /** A bounce that is final (5xx, or a DSN's 5.x.x) and about the recipient's address, not the message (concernOf). */
  permanent?: boolean;
  proven: boolean;
}

/** What follows for the lists: a proven final bounce of the address suppresses; a proven complaint suppresses and unsubscribes. */
export function listingOf(outcome: RecipientOutcome): 'bounce' | 'complaint' | undefined {
  if (!outcome.proven) return undefined;
  const state = outcome.types.at(-1);
  if (state === 'complained') return 'complaint';
  return state === 'bounced' && outcome.permanent ? 'bounce' : undefined;
}

/** One recipient's block of a DSN, as the report wrote it (bounces/report.ts). */
export interface DsnBlock {
  action: string;
  status: string | undefined;
  diagnostic: string | undefined;
}

/**
 * What one DSN block means: failed with a 5.x.x status is a final bounce (suppressing only when it is
 * about the address), with 4.x.x a delay (the remote server still tries), with no status at all an
 * undetermined bounce; `delayed` is a delay; delivered, relayed and expanded change nothing.
 */
export function dsnOutcome(block: DsnBlock, recipient: string, proven: boolean): RecipientOutcome | undefined {
  const response = [block.status, block.diagnostic].filter(Boolean).join(' ') || `Action: ${block.action || 'none'}`;
  if (block.action === 'delayed') return { recipient, types: ['delivery_delayed'], response, proven };
  if (block.action !== 'failed') return undefined;
  const { type } = bounceOf(response);
  if (type === 'Transient') return { recipient, types: ['delivery_delayed'], response, proven };
  // A DSN is the final server's answer to our DATA, passed on.
  const permanent = type === 'Permanent' && concernOf({ stage: 'data', response }) === 'recipient';
  return { recipient, types: ['bounced'], response, permanent, proven };
}

/** What an ARF report means: a complaint, unless it is a reversal (not-spam) or a DMARC forensic report (auth-failure). */
export function complaintOutcome(feedbackType: string, recipient: string, proven: boolean): RecipientOutcome | undefined {
  if (feedbackType === 'not-spam' || feedbackType === 'auth-failure') return undefined;
  return { recipient, types: ['complained'], response: `Feedback-Type: ${feedbackType || 'abuse'}`, proven };
}

// What providers that relay our mail report later (domain/feedback/): their own words for a bounce,
// a complaint or a delivery, read here into the same outcomes. A notification reaches these only once
// its signature verified and it matched our email, so each is proof enough to act on.

/** An enhanced status for each of Resend's subtypes, for a provider that names a subtype but gives no status. */
const STATUS_OF: Record<BounceSubType, string | undefined> = {
  General: '0.0',
  NoEmail: '1.1',
  MailboxFull: '2.2',
  MessageTooLarge: '3.4',
  ContentRejected: '6.0',
  AttachmentRejected: '6.1',
  MessageRejected: '7.1',
  Undetermined: undefined,
};

const CLASS: Record<BounceType, string> = { Permanent: '5', Transient: '4', Undetermined: '' };

/**
 * A provider's bounce: Permanent is bounced and final, Transient a delay, Undetermined bounced and not
 * final. Its response holds the enhanced status the provider gave (or its detail's) when that agrees
 * with its type, else starts with one that stands for its type and subtype, so that the webhook's
 * bounce (bounceOf) says what the provider said.
 */
function providerBounce(recipient: string, type: BounceType, subType: BounceSubType, status: string | undefined, detail: string): RecipientOutcome {
  const own = status?.match(/^[245]\.\d{1,3}\.\d{1,3}$/) ? status : undefined;
  const agrees = (own ?? statusOf(detail))?.startsWith(CLASS[type] || '-');
  const lead = agrees ? own : type === 'Undetermined' ? undefined : `${CLASS[type]}.${STATUS_OF[subType] ?? '0.0'}`;
  const response = [lead, detail].filter(Boolean).join(' ') || 'bounced';
  if (type === 'Transient') return { recipient, types: ['delivery_delayed'], response, proven: true };
  return { recipient, types: ['bounced'], response, permanent: type === 'Permanent', proven: true };
}

const delivered = (recipient: string, response: string): RecipientOutcome => ({ recipient, types: ['delivered'], response: response || 'delivered', proven: true });

const RESEND_SUB_TYPES = new Set<string>(Object.keys(STATUS_OF));

/** One recipient of an Amazon SES notification (notificationType or eventType), in SES's words. */
export interface SesReading {
  kind: string;
  bounceType?: string;
  bounceSubType?: string;
  status?: string;
  diagnostic?: string;
  feedbackType?: string;
  smtpResponse?: string;
}

/**
 * SES: a Bounce by its bounceType (Permanent, Transient, Undetermined) and bounceSubType, which are
 * Resend's own names (SES's Suppressed and OnAccountSuppressionList read General); a Complaint as an ARF
 * report's type would be; a DeliveryDelay is a delay; a Delivery is delivered.
 */
export function sesOutcome(reading: SesReading, recipient: string): RecipientOutcome | undefined {
  const detail = reading.diagnostic ?? '';
  if (reading.kind === 'Bounce') {
    const type: BounceType = reading.bounceType === 'Permanent' || reading.bounceType === 'Transient' ? reading.bounceType : 'Undetermined';
    const subType = RESEND_SUB_TYPES.has(reading.bounceSubType ?? '') ? (reading.bounceSubType as BounceSubType) : 'General';
    return providerBounce(recipient, type, subType, reading.status, detail);
  }
  if (reading.kind === 'DeliveryDelay') return providerBounce(recipient, 'Transient', 'General', reading.status, detail);
  if (reading.kind === 'Complaint') return complaintOutcome(reading.feedbackType ?? '', recipient, true);
  if (reading.kind === 'Delivery') return delivered(recipient, reading.smtpResponse ?? '');
  return undefined;
}

/**
 * Postmark's bounce types (its `Type`), as Resend's; a type not here (AutoResponder, Subscribe,
 * ChallengeVerification, ManuallyDeactivated...) says nothing of delivery and records nothing.
 */
const POSTMARK_BOUNCES: Record<string, [BounceType, BounceSubType]> = {
  HardBounce: ['Permanent', 'NoEmail'],
  BadEmailAddress: ['Permanent', 'NoEmail'],
  SoftBounce: ['Transient', 'General'],
  Transient: ['Transient', 'General'],
  DnsError: ['Transient', 'General'],
  Blocked: ['Transient', 'MessageRejected'],
  DMARCPolicy: ['Undetermined', 'MessageRejected'],
  Unknown: ['Undetermined', 'Undetermined'],
};

/** Postmark: a Bounce by its Type (POSTMARK_BOUNCES), a SpamComplaint (as a record or a bounce type), a Delivery. */
export function postmarkOutcome(reading: { recordType: string; type?: string; details?: string }, recipient: string): RecipientOutcome | undefined {
  const detail = reading.details ?? '';
  if (reading.recordType === 'SpamComplaint' || reading.type === 'SpamComplaint') return complaintOutcome('abuse', recipient, true);
  if (reading.recordType === 'Delivery') return delivered(recipient, detail);
  const bounce = reading.recordType === 'Bounce' ? POSTMARK_BOUNCES[reading.type ?? ''] : undefined;
  return bounce && providerBounce(recipient, bounce[0], bounce[1], undefined, `${reading.type}: ${detail}`);
}

/** Mailgun: `failed` with severity permanent is a final bounce, temporary a delay; `complained`; `delivered`. */
export function mailgunOutcome(reading: { event: string; severity?: string; status?: string; detail: string }, recipient: string): RecipientOutcome | undefined {
  if (reading.event === 'failed') {
    const type = reading.severity === 'permanent' ? 'Permanent' : reading.severity === 'temporary' ? 'Transient' : 'Undetermined';
    return providerBounce(recipient, type, 'General', reading.status, reading.detail);
  }
  if (reading.event === 'complained') return complaintOutcome('abuse', recipient, true);
  if (reading.event === 'delivered') return delivered(recipient, reading.detail);
  return undefined;
}

/**
 * SendGrid: `bounce` of type bounce is final, of type blocked a delay (SendGrid's blocks pass); `deferred`
 * a delay; `dropped` (SendGrid did not send it: its own lists, an invalid address) bounced, not final;
 * `spamreport` a complaint; `delivered`.
 */
export function sendgridOutcome(reading: { event: string; type?: string; status?: string; reason?: string }, recipient: string): RecipientOutcome | undefined {
  const detail = reading.reason ?? '';
  if (reading.event === 'bounce') return providerBounce(recipient, reading.type === 'blocked' ? 'Transient' : 'Permanent', 'General', reading.status, detail);
  if (reading.event === 'deferred') return providerBounce(recipient, 'Transient', 'General', reading.status, detail);
  if (reading.event === 'dropped') return providerBounce(recipient, 'Undetermined', 'Undetermined', undefined, `dropped: ${detail}`);
  if (reading.event === 'spamreport') return complaintOutcome('abuse', recipient, true);
  if (reading.event === 'delivered') return delivered(recipient, detail);
  return undefined;
}

/**
 * Whether a provider's outcome adds anything, given the recipient's last event: a delivery is news only
 * after an event below delivered (a delay reported since, say), not after delivered, opened, clicked
 * or complained; the relay's 250 already recorded most.
 */
export function isNews(outcome: RecipientOutcome, lastEvent: string): boolean {
  if (outcome.types.at(-1) !== 'delivered') return true;
  return EMAIL_STATES.indexOf(lastEvent as EmailState) < EMAIL_STATES.indexOf('delivered');
}
