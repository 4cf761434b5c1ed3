// Resend's test inboxes: their outcomes are simulated in every mode and no server is contacted.
// `+label` variants work for all but suppressed@ (as in Resend).

export interface SimulatedOutcome {
  events: string[];
  response: string;
}

const OUTCOMES: Record<string, SimulatedOutcome> = {
  delivered: { events: ['sent', 'delivered'], response: '250 2.0.0 OK (simulated)' },
  bounced: { events: ['sent', 'bounced'], response: "550 5.1.1 The email account that you tried to reach does not exist (simulated)" },
  complained: { events: ['sent', 'delivered', 'complained'], response: '250 2.0.0 OK (simulated)' },
  suppressed: { events: ['suppressed'], response: 'The address is on the suppression list (simulated)' },
};

/** The simulated outcome for a Resend test address, or undefined for any other address. */
export function simulatedOutcome(address: string): SimulatedOutcome | undefined {
  const match = address.toLowerCase().match(/^(delivered|bounced|complained|suppressed)(\+[^@]*)?@resend\.dev$/);
  if (!match || (match[1] === 'suppressed' && match[2] !== undefined)) return undefined;
  return OUTCOMES[match[1]!];
}
