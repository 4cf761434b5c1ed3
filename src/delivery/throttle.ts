// Outbound throttling: how fast this process hands messages to each destination (an MX host in
// direct mode, a recipient's domain in relay mode), so that receiving servers are not flooded and a
// server that pushes back gets less. In memory, per worker process: N workers send N times the rate.
import type { Clock } from '../clock.ts';
import type { ThrottleRule } from '../config.ts';
import { resultForAll, type SendResult } from './smtp-send.ts';

/**
 * The longest a send waits in its worker slot for its destination's budget; beyond it the recipient
 * is not attempted now and its email's job comes back when the budget allows (send-email.ts).
 */
export const THROTTLE_WAIT_MS = 250;

/** A push-back halves the rate at most this often: the answers of one burst count once. */
const SLOW_DOWN_EVERY_MS = 10_000;

/** After a push-back the rate recovers a tenth of the configured one per minute: 5 minutes from half. */
const RECOVERY_PER_MS = 0.1 / 60_000;

/** No lower than this share of the configured rate, however often the destination pushes back. */
const SLOWEST = 1 / 32;

/** How often budgets back to where a new one starts (full, at full rate, no slot promised) are dropped. */
const SWEEP_EVERY_MS = 10 * 60_000;

/** Go now; go after `waitMs` (the slot is taken, a short wait); or come back at `until` (epoch ms). */
export type Admission = { waitMs: number } | { until: number };

export interface Throttle {
  /** Takes a slot for one message to `destination`, or says when to come back for one. */
  admit(destination: string): Admission;
  /** The destination pushed back (outcomes.ts, pushesBack): its rate halves, then recovers. */
  slowDown(destination: string): void;
}

/** The recipients of `to`, not sent now: their destination has a slot for them at `until`. */
export function throttledAll(to: string[], destination: string, until: number): SendResult {
  const response = `Throttled by Mailroom: ${destination} is at its rate`;
  return resultForAll(to, { accepted: false, code: undefined, response, throttledUntil: until });
}

/**
 * A token bucket that holds a second's worth (at least one message), so that a quiet destination
 * takes a short burst at once. `tokens` below zero are slots taken by sends waiting their turn; `tail`
 * is the last slot promised to a recipient sent away, so that those sent away together come back
 * spread over the following slots instead of all at once. `factor` is the share of the rule's rate it
 * runs at (below 1 after a push-back, at `pushedAt`), as of `factorAt`.
 */
interface Budget {
  readonly perSecond: number;
  tokens: number;
  at: number;
  tail: number;
  factor: number;
  factorAt: number;
  pushedAt: number;
}

/** The rate a budget runs at now: its rule's, or less while it recovers from a push-back. */
function rateOf(budget: Budget, now: number): number {
  if (budget.factor < 1) budget.factor = Math.min(1, budget.factor + (now - budget.factorAt) * RECOVERY_PER_MS);
  budget.factorAt = now;
  return budget.perSecond * budget.factor;
}

function refill(budget: Budget, now: number): number {
  const rate = rateOf(budget, now);
  budget.tokens = Math.min(Math.max(1, rate), budget.tokens + ((now - budget.at) * rate) / 1000);
  budget.at = now;
  return rate;
}

/** The throttle of `rules` (config.ts); undefined when there are none, so sends pay nothing for it. */
export function createThrottle(rules: readonly ThrottleRule[], clock: Clock): Throttle | undefined {
  if (rules.length === 0) return undefined;
  const named = new Map(rules.filter((rule) => rule.name !== '*').map((rule) => [rule.name, rule]));
  const others = rules.find((rule) => rule.name === '*');
  const budgets = new Map<string, Budget>();
  let sweptAt = clock.now();

  /**
   * The budget of `destination`: a named rule matches itself and its subdomains, the longest name
   * first, and all it matches share one budget; `*` gives every other destination one of its own.
   */
  function budgetOf(destination: string, now: number): Budget | undefined {
    const name = destination.toLowerCase().replace(/\.$/, '');
    let key: string | undefined;
    let rule: ThrottleRule | undefined;
    for (let suffix = name; rule === undefined; ) {
      rule = named.get(suffix);
      if (rule) key = suffix;
      const dot = suffix.indexOf('.');
      if (dot === -1) break;
      suffix = suffix.slice(dot + 1);
    }
    if (!rule && others) [key, rule] = [`*${name}`, others];
    if (!rule) return undefined;
    if (now - sweptAt > SWEEP_EVERY_MS) {
      sweptAt = now;
      for (const [other, budget] of budgets) {
        const rate = refill(budget, now);
        if (budget.factor === 1 && budget.tokens >= Math.max(1, rate) && budget.tail <= now) budgets.delete(other);
      }
    }
    let budget = budgets.get(key!);
    if (!budget) {
      budget = { perSecond: rule.perSecond, tokens: Math.max(1, rule.perSecond), at: now, tail: now, factor: 1, factorAt: now, pushedAt: -Infinity };
      budgets.set(key!, budget);
    }
    return budget;
  }

  return {
    admit(destination) {
      const now = clock.now();
      const budget = budgetOf(destination, now);
      if (!budget) return { waitMs: 0 };
      const rate = refill(budget, now);
      const interval = 1000 / rate;
      const waitMs = budget.tokens >= 1 ? 0 : (1 - budget.tokens) * interval;
      if (waitMs <= THROTTLE_WAIT_MS) {
        budget.tokens -= 1;
        return { waitMs };
      }
      budget.tail = Math.max(budget.tail + interval, now + waitMs);
      return { until: Math.ceil(budget.tail) };
    },
    slowDown(destination) {
      const now = clock.now();
      const budget = budgetOf(destination, now);
      if (!budget) return;
      refill(budget, now);
      if (now - budget.pushedAt < SLOW_DOWN_EVERY_MS) return;
      budget.pushedAt = now;
      budget.factor = Math.max(SLOWEST, budget.factor / 2);
      budget.tokens = Math.min(0, budget.tokens); // no burst: the slots already promised stand
    },
  };
}
