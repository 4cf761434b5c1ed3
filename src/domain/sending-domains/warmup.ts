// A sending domain's warm-up (PATCH /domains/:id {warmup: {start, days}}): mailbox providers trust a
// new domain or address by its history, so its daily volume grows geometrically from `start` on day 0
// to WARMUP_CEILING on day `days - 1`, then has no limit. Pure, so the dashboard can draw the curve.

/** The volume of a warm-up's last day: a sender that sends this much a day has a reputation to keep. */
export const WARMUP_CEILING = 100_000;

/** The longest warm-up accepted, in days. */
export const WARMUP_MAX_DAYS = 365;

export interface Warmup {
  start: number;
  days: number;
}

/**
 * The messages a warm-up allows on day `day` (0: the UTC day it started): round(start * r^day) with
 * r = (max(start, WARMUP_CEILING) / start)^(1 / (days - 1)); null (no limit) from day `days` on.
 */
export function warmupVolume(warmup: Warmup, day: number): number | null {
  if (day >= warmup.days) return null;
  if (day <= 0 || warmup.days === 1) return warmup.start;
  const ceiling = Math.max(warmup.start, WARMUP_CEILING);
  return Math.round(warmup.start * (ceiling / warmup.start) ** (day / (warmup.days - 1)));
}

/** Every day of the warm-up with its volume, and the first day without a limit (volume null). */
export function warmupCurve(warmup: Warmup): { day: number; volume: number | null }[] {
  return Array.from({ length: warmup.days + 1 }, (_, day) => ({ day, volume: warmupVolume(warmup, day) }));
}

const DAY_MS = 86_400_000;

/** The warm-up's day at `now`: whole UTC days since the UTC day of `startedAt` (epoch ms both). */
export function warmupDay(startedAt: number, now: number): number {
  return Math.floor(now / DAY_MS) - Math.floor(startedAt / DAY_MS);
}
