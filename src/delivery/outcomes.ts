import type { EmailState } from '../domain/events/email-events.ts';

/** What a recipient's SMTP answer means for it. */
export type Verdict = 'delivered' | 'deferred' | 'bounced';

/**
 * The one reading of an SMTP answer, for the relay, direct delivery and the test addresses alike:
 * accepted is delivered; a 5xx is a bounce, final; anything else, a 4xx or no answer at all (a lost
 * connection), is deferred: worth another try.
 */
export function classify(answer: { accepted: boolean; code: number | undefined }): Verdict {
  if (answer.accepted) return 'delivered';
  return answer.code !== undefined && answer.code >= 500 ? 'bounced' : 'deferred';
}

/**
 * Enhanced status codes that ask a sender to slow down: Gmail's 4.7.28 (rate limited for an unusual
 * rate of mail) and Microsoft's 4.7.500 to 4.7.699 ("server busy, try again later", new or unknown
 * senders). Gmail's 4.2.1 is left out: it speaks of one mailbox receiving too fast, not of the server.
 */
const SLOW_DOWN_STATUS = /^4\.7\.(28|[56]\d\d)$/;

/** The wording of a 4xx that asks the same where the status code does not. */
const SLOW_DOWN_TEXT = /too many (connections|messages|sessions|concurrent)|rate.?limit|unusual rate|throttl|server busy|slow down/i;

/**
 * Whether a refusal is the server pushing back on our rate rather than on this message: 421 (the
 * server closes the channel: overloaded, or too many connections from us), or a 4xx that says so.
 */
export function pushesBack(answer: { code: number | undefined; response: string }): boolean {
  const { code, response } = answer;
  if (code === 421) return true;
  if (code === undefined || code < 400 || code >= 500) return false;
  return SLOW_DOWN_STATUS.test(statusOf(response) ?? '') || SLOW_DOWN_TEXT.test(response);
}

/** The events a verdict records for a recipient; a deferral records `failed` once the attempts have run out. */
export function eventsOf(verdict: Verdict, exhausted: boolean): EmailState[] {
  if (verdict === 'delivered') return ['sent', 'delivered'];
  if (verdict === 'bounced') return ['bounced'];
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

/** The enhanced status code in an answer or a DSN's Status, `5.1.1`; the reply code alone gives `5.0.0`. */
export function statusOf(text: string): string | undefined {
  const enhanced = text.match(/(?:^|[\s;(-])([245])\.(\d{1,3})\.(\d{1,3})(?=$|[\s;,.):])/);
  if (enhanced) return `${enhanced[1]}.${enhanced[2]}.${enhanced[3]}`;
  const basic = text.match(/(?:^|[\s;])([245])\d\d(?=$|[\s-])/);
  return basic ? `${basic[1]}.0.0` : undefined;
}

/** What a bounce answer (or a DSN's status and diagnostic) says of the bounce: its type and subtype. */
export function bounceOf(text: string): { type: BounceType; subType: BounceSubType } {
  const status = statusOf(text);
  if (!status || status.startsWith('2')) return { type: 'Undetermined', subType: 'Undetermined' };
  const subType = SUB_TYPES[status.slice(2)] ?? 'General';
  return { type: status.startsWith('5') ? 'Permanent' : 'Transient', subType };
}
