import { statusOf } from '../../delivery/smtp-reply.ts';
import type { SmtpStage } from '../../delivery/smtp-send.ts';
import type { EmailState } from '../events/email-events.ts';

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
