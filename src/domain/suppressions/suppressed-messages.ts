// What a recipient on the suppression list records. Its `suppressed` event keeps a message saying why,
// one per origin (Resend's wording for bounces), and the email.suppressed payload gives the reason Resend
// names for it. The event row keeps the message only; the reason is read back from it, which works
// because each origin has a message of its own.
import type { SuppressionOrigin } from '../../store/schema.ts';

const MESSAGES: Record<SuppressionOrigin, string> = {
  bounce: "The recipient's email address is on the suppression list because it has a recent history of producing hard bounces.",
  complaint: "The recipient's email address is on the suppression list because it has a recent history of producing complaints.",
  manual: "The recipient's email address is on the suppression list because it was added to it.",
};

export type SuppressedReason = 'previous_bounce' | 'previous_complaint';

// A manual entry has no reason: nothing bounced or complained, and Resend names no other.
const REASONS = new Map<string, SuppressedReason>([
  [MESSAGES.bounce, 'previous_bounce'],
  [MESSAGES.complaint, 'previous_complaint'],
]);

/** The message a recipient suppressed by an entry of `origin` records. */
export function suppressedMessage(origin: SuppressionOrigin): string {
  return MESSAGES[origin];
}

/** The reason email.suppressed gives for a recorded message; undefined for a manual entry's. */
export function suppressedReason(message: string): SuppressedReason | undefined {
  return REASONS.get(message);
}
