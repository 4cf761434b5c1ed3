import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration } from '../src/time/durations.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('parseDuration', () => {
  it('reads a number and a unit, short or long, singular or plural, in any case and spacing', () => {
    const cases: [string, number][] = [
      ['30s', 30_000],
      ['10m', 10 * MINUTE],
      ['10 minutes', 10 * MINUTE],
      ['30 minutes', 30 * MINUTE],
      ['1 min', MINUTE],
      ['2 hours', 2 * HOUR],
      ['1 hour', HOUR],
      ['48h', 48 * HOUR],
      ['2 HRS', 2 * HOUR],
      ['1 day', DAY],
      ['1d', DAY],
      ['3 days', 3 * DAY],
      ['2 weeks', 14 * DAY],
      ['1.5h', 90 * MINUTE],
      ['.5 days', 12 * HOUR],
      ['250ms', 250],
      ['  10m  ', 10 * MINUTE],
      ['0m', 0],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('refuses anything else: no unit, an unknown or variable-length unit, a sign, several parts, words around', () => {
    for (const text of ['', '10', 'm', '10 parsecs', '1 month', '1 year', '-1h', '+1h', '1h 30m', 'in 10 minutes', '10 minutes ago', '1e3s', '1,5h', 'constructor', '1 constructor', '1 toString', '10 m s']) {
      assert.equal(parseDuration(text), undefined, text);
    }
  });
});
