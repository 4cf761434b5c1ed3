// Durations as people and Resend write them: a number and a unit, "10m", "2 hours", "1 day", "1.5h".
// One unit per duration; months and years are refused, having no fixed length.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const UNITS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: SECOND,
  sec: SECOND,
  secs: SECOND,
  second: SECOND,
  seconds: SECOND,
  m: MINUTE,
  min: MINUTE,
  mins: MINUTE,
  minute: MINUTE,
  minutes: MINUTE,
  h: HOUR,
  hr: HOUR,
  hrs: HOUR,
  hour: HOUR,
  hours: HOUR,
  d: DAY,
  day: DAY,
  days: DAY,
  w: 7 * DAY,
  week: 7 * DAY,
  weeks: 7 * DAY,
};

const DURATION = /^(\d{1,9}(?:\.\d{1,6})?|\.\d{1,6})\s*([a-z]+)$/;

/** The length of a duration such as "10m", "2 hours" or "1 day", in whole ms; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim().toLowerCase());
  const unit = match && Object.hasOwn(UNITS, match[2]!) ? UNITS[match[2]!]! : undefined;
  return unit === undefined ? undefined : Math.round(Number(match![1]) * unit);
}
