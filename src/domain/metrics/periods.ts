import { AppError, quoted } from '../../errors.ts';
import { SLOT_MS, slotOf } from './rollup.ts';

// Time for GET /emails/metrics: the range as whole 15-minute slots, and its periods (hours, days, weeks
// from Monday, months) as the wall clock of an IANA zone has them, clock changes included. "Wall" times
// below are a zone's local date and time written as if they were UTC epoch ms.

export const GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The most periods one answer may have. */
export const MAX_PERIODS = 10_000;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A zone's clock: the offset at an instant, and the instant of a wall time. */
export interface Zone {
  name: string;
  offsetAt(instant: number): number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone of an IANA name ("UTC", "America/New_York"); 422 for any other text. */
export function zoneOf(name: string): Zone {
  let format = formats.get(name);
  if (!format) {
    try {
      // Names only: Intl would also take offsets such as "+05:30", which are no IANA zones.
      if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) throw new RangeError(name);
      format = new Intl.DateTimeFormat('en-US', { timeZone: name, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    } catch {
      throw new AppError('validation_error', `Invalid \`timezone\`: ${quoted(name)} is not an IANA time zone such as "UTC" or "America/New_York".`);
    }
    if (formats.size > 1000) formats.clear();
    formats.set(name, format);
  }
  const utc = format.resolvedOptions().timeZone === 'UTC';
  return {
    name,
    offsetAt(instant) {
      if (utc) return 0;
      const second = Math.floor(instant / 1000) * 1000;
      const p = Object.fromEntries(format.formatToParts(second).map((part) => [part.type, Number(part.value)]));
      return Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute, p.second) - second;
    },
  };
}

const wallOf = (zone: Zone, instant: number) => instant + zone.offsetAt(instant);

/** The instant a wall time stands for (in a gap a clock change skips, an instant next to it). */
function instantOfWall(zone: Zone, wall: number): number {
  const guess = wall - zone.offsetAt(wall);
  return wall - zone.offsetAt(guess);
}

/** The wall time that starts the period holding `wall`. */
function floorWall(wall: number, granularity: Granularity): number {
  if (granularity === 'hourly') return Math.floor(wall / HOUR) * HOUR;
  const day = Math.floor(wall / DAY) * DAY;
  if (granularity === 'daily') return day;
  // Weeks start on Monday (ISO 8601); 1970-01-01 was a Thursday.
  if (granularity === 'weekly') return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY;
  const date = new Date(day);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The wall time one period after a period's start. */
function nextWall(wall: number, granularity: Granularity): number {
  const d = new Date(wall);
  if (granularity === 'hourly') return wall + HOUR;
  if (granularity === 'daily') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  if (granularity === 'weekly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The instant the period holding `instant` starts. */
export function periodStart(zone: Zone, instant: number, granularity: Granularity): number {
  return instantOfWall(zone, floorWall(wallOf(zone, instant), granularity));
}

/**
 * The starts of the periods that meet [from, to), in order; at most `limit`. An hour repeated when the
 * clock goes back is two periods.
 */
export function periodStarts(zone: Zone, from: number, to: number, granularity: Granularity, limit: number): number[] {
  const starts: number[] = [];
  for (let start = periodStart(zone, from, granularity); start < to && starts.length < limit; ) {
    starts.push(start);
    const next = granularity === 'hourly' ? periodStart(zone, start + HOUR, 'hourly') : instantOfWall(zone, nextWall(wallOf(zone, start), granularity));
    start = next > start ? next : start + HOUR;
  }
  return starts;
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** An instant as ISO 8601 in a zone, with its offset: "2026-07-01T00:00:00-04:00". */
export function zonedIso(zone: Zone, instant: number): string {
  const offset = zone.offsetAt(instant);
  const wall = new Date(instant + offset).toISOString().slice(0, 19);
  const minutes = Math.round(offset / 60_000);
  return `${wall}${minutes < 0 ? '-' : '+'}${pad(Math.trunc(minutes / 60))}:${pad(minutes % 60)}`;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Wall ms of calendar fields, or undefined when they name no real date and time. */
function wallFields(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number | undefined {
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(wall);
  const ok = back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d && back.getUTCHours() === h && back.getUTCMinutes() === mi && back.getUTCSeconds() === s;
  return ok && y >= 1970 ? wall : undefined;
}

function unparseable(field: string, value: string): AppError {
  return new AppError('validation_error', `Invalid \`${field}\`: ${quoted(value)} is not an ISO 8601 date ("2026-07-01") or datetime ("2026-07-01T09:30:00Z").`);
}

/**
 * A date parameter as an instant. A date alone means the start of that day in `zone` (for `end_date`,
 * its end: the next day's start); a datetime without an offset is a wall time in `zone`.
 */
export function parseDateParam(field: 'start_date' | 'end_date', value: string, zone: Zone): number {
  const date = DATE.exec(value);
  if (date) {
    const [y, mo, d] = date.slice(1).map(Number) as [number, number, number];
    const wall = wallFields(y, mo, d);
    if (wall === undefined) throw unparseable(field, value);
    return instantOfWall(zone, field === 'end_date' ? nextWall(wall, 'daily') : wall);
  }
  const time = DATETIME.exec(value);
  if (!time) throw unparseable(field, value);
  const [y, mo, d, h, mi, s] = time.slice(1, 7).map((part) => Number(part ?? 0));
  const wall = wallFields(y!, mo!, d!, h, mi, s);
  if (wall === undefined) throw unparseable(field, value);
  const ms = wall + Math.floor(Number(time[7] ?? 0) * 1000);
  const offset = time[8];
  if (offset === undefined) return instantOfWall(zone, ms);
  if (offset.toUpperCase() === 'Z') return ms;
  const [, sign, hh, mm] = /^([+-])(\d{2}):?(\d{2})?$/.exec(offset)!;
  return ms - (sign === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm ?? 0)) * 60_000;
}

/** The range a question covers, in whole slots: [from, to). */
export interface SlotRange {
  from: number;
  to: number;
}

/**
 * The range of a question: start rounded down to its slot, end (clamped to now) up to a slot's end;
 * by default the end is now and the start the beginning of the day six days before the end's day.
 */
export function slotRange(zone: Zone, start: string | undefined, end: string | undefined, now: number): SlotRange {
  const endInstant = Math.min(end === undefined ? now : parseDateParam('end_date', end, zone), now);
  const startInstant =
    start === undefined ? instantOfWall(zone, floorWall(wallOf(zone, endInstant - 1), 'daily') - 6 * DAY) : parseDateParam('start_date', start, zone);
  if (startInstant > endInstant) {
    throw new AppError('validation_error', `\`start_date\` (${new Date(startInstant).toISOString()}) must be on or before \`end_date\` (${new Date(endInstant).toISOString()}, a future end being now).`);
  }
  return { from: slotOf(startInstant), to: slotOf(endInstant + SLOT_MS - 1) };
}
