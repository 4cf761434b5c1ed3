// Resend's test inboxes: their outcomes are simulated in every mode and no server is contacted.
// `+label` variants work for all of them (as in Resend). suppressed@resend.dev is on the suppression
// list instead (recipients/policy.ts): the policy refuses it before anything is sent.
import type { RecipientResult } from '../../delivery/smtp-send.ts';
import type { EmailState } from '../events/email-events.ts';

/**
 * A test address's simulated answer, read like any SMTP answer, with the events Resend shows around it:
 * `sent` before a bounce (theirs bounce after accepting), `complained` after a delivery.
 */
export interface SimulatedOutcome {
  answer: RecipientResult;
  before: EmailState[];
  after: EmailState[];
}

const accepted: RecipientResult = { accepted: true, code: 250, response: '250 2.0.0 OK (simulated)' };

const OUTCOMES: Record<string, SimulatedOutcome> = {
  delivered: { answer: accepted, before: [], after: [] },
  bounced: {
    answer: { accepted: false, code: 550, stage: 'rcpt', response: '550 5.1.1 The email account that you tried to reach does not exist (simulated)' },
    before: ['sent'],
    after: [],
  },
  complained: { answer: accepted, before: [], after: ['complained'] },
};

/** The simulated outcome for a Resend test address, or undefined for any other address. */
export function simulatedOutcome(address: string): SimulatedOutcome | undefined {
  const match = address.toLowerCase().match(/^(delivered|bounced|complained)(\+[^@]*)?@resend\.dev$/);
  return match ? OUTCOMES[match[1]!] : undefined;
}
