// Opens and clicks that no person made. Security gateways fetch every link (and image) of a message as
// it arrives, to check it; link previews do the same. What they fetch is recorded, flagged with the
// reason, and counted nowhere (no webhook, no change of status: events/email-events.ts). Mail privacy
// proxies (Gmail's image proxy, Apple Mail Privacy Protection) are not among them: they fetch images
// for the person, or for every message as Apple's does, with ordinary user agents.

/** A scanner's fetch comes this soon after delivery; the same user agent later is taken for a person's client. */
export const SCAN_WINDOW_MS = 120_000;

/**
 * Lower-case parts of the user agents of link scanners and previews: mail security gateways, then
 * generic names of automated clients.
 */
export const SCANNER_AGENTS = [
  'barracuda',
  'mimecast',
  'proofpoint',
  'microsoft office existence discovery',
  'safelinks',
  'trendmicro',
  'messagelabs',
  'forcepoint',
  'sophos',
  'bot',
  'crawler',
  'spider',
  'scanner',
  'preview',
  'headless',
];

export interface Fetch {
  method: string;
  userAgent: string | undefined;
  /** When the recipient's delivery was recorded (epoch ms), if it was. */
  deliveredAt: number | undefined;
  now: number;
}

/** Why this fetch looks like a bot's, or undefined when it looks like a person's. */
export function botReason({ method, userAgent, deliveredAt, now }: Fetch): string | undefined {
  // Browsers and mail clients GET images and links; only checkers ask for the headers alone.
  if (method === 'HEAD') return 'HEAD request';
  if (deliveredAt === undefined || now - deliveredAt > SCAN_WINDOW_MS) return undefined;
  const agent = userAgent?.toLowerCase().trim() ?? '';
  if (agent === '') return 'no user agent, soon after delivery';
  const part = SCANNER_AGENTS.find((p) => agent.includes(p));
  return part && `scanner user agent (${part}), soon after delivery`;
}
