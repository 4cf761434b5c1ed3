// Time comes from a Clock so tests can move it; timestamps on the wire use Resend's Postgres text format.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Formats epoch milliseconds as Resend does: "2026-04-03 22:13:42.674+00". */
export function toTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '+00');
}
