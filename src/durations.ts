// Human durations, as Resend's APIs take them: "30 minutes", "3 days", "1 hour", "10m", "48h".

const UNITS: Record<string, number> = {
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
  w: 604_800_000, week: 604_800_000, weeks: 604_800_000,
};

/** A duration in ms: a positive whole number and a unit (seconds to weeks); undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d{1,9})\s*([a-z]+)\s*$/i.exec(text);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return undefined;
  const ms = Number(match[1]) * unit;
  return ms > 0 ? ms : undefined;
}
