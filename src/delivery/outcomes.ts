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

/** The events a verdict records for a recipient; a deferral records `failed` once the attempts have run out. */
export function eventsOf(verdict: Verdict, exhausted: boolean): EmailState[] {
  if (verdict === 'delivered') return ['sent', 'delivered'];
  if (verdict === 'bounced') return ['bounced'];
  return [exhausted ? 'failed' : 'delivery_delayed'];
}
