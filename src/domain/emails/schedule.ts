import * as chrono from 'chrono-node';
import { invalidField, quoted } from '../../errors.ts';

const MAX_AHEAD_MS = 30 * 24 * 3600 * 1000;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Reads `scheduled_at`: ISO 8601, or natural language ("in 1 min", "tomorrow at 9am") relative to
 * the server clock, in UTC unless the text names a zone. It must lie in the future, at most 30 days on.
 */
export function parseScheduledAt(value: string, now: number): number {
  const text = value.trim();
  let at: number | undefined;
  if (ISO_8601.test(text)) {
    at = Date.parse(text);
  } else {
    const [result] = chrono.parse(text, { instant: new Date(now), timezone: 'UTC' }, { forwardDate: true });
    // The whole value must be a date, not a sentence that merely contains one.
    if (result && result.index === 0 && result.text.length === text.length) at = result.start.date().getTime();
  }
  if (at === undefined || Number.isNaN(at)) {
    throw invalidField('scheduled_at', `${quoted(value)} is not a date; use ISO 8601 or natural language such as "in 1 min".`);
  }
  if (at <= now) throw invalidField('scheduled_at', 'must be in the future.');
  if (at - now > MAX_AHEAD_MS) throw invalidField('scheduled_at', 'must be at most 30 days in the future.');
  return at;
}
