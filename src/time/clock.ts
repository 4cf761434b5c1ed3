// Time comes from a Clock so tests can move it; timestamps on the wire use Resend's Postgres text format.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

// Busy moments format the same millisecond many times: the last one is kept.
let last = { ms: Number.NaN, text: '' };

/** Formats epoch milliseconds as Resend does: "2026-04-03 22:13:42.674+00". */
export function toTimestamp(ms: number): string {
  if (ms !== last.ms) last = { ms, text: new Date(ms).toISOString().replace('T', ' ').replace('Z', '+00') };
  return last.text;
}

/** A timestamp of ours ("2026-11-22 23:41:11.894+00") as webhook payloads write time: ISO 8601 in UTC. */
export const isoTime = (timestamp: string) => timestamp.replace(' ', 'T').replace(/\+00$/, 'Z');
