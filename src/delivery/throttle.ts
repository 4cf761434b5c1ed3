// Outbound throttling: how fast Mailroom hands messages to each destination (an MX host in direct
// mode, a recipient's domain in relay mode), so that receiving servers are not flooded and a server
// that pushes back gets less. Each destination has a budget of messages per window (window-budget.ts).
// On PostgreSQL the worker processes share it, and share its slow-downs (store/rate-limit-windows.ts,
// store/throttle-slowdowns.ts); on SQLite a process counts alone.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../time/clock.ts';
import type { ThrottleRule } from '../config.ts';
import { faultOf } from '../store/availability.ts';
import type { SharedSlowdowns, Slowdown } from '../store/throttle-slowdowns.ts';
import { createWindowBudget, type TakeFromWindow } from '../limits/window-budget.ts';
import { resultForAll, type SendResult } from './smtp-send.ts';

/**
 * The longest a send waits in its worker slot for its destination's next window; beyond it the
 * recipient is not attempted now and its email's job comes back when the budget allows (send-email.ts).
 */
const THROTTLE_WAIT_MS = 250;

/** A push-back halves the rate at most this often: the answers of one burst count once. */
const SLOW_DOWN_EVERY_MS = 10_000;

/** After a push-back the rate recovers a tenth of the configured one per minute: 5 minutes from half. */
const RECOVERY_PER_MS = 0.1 / 60_000;

/** No lower than this share of the configured rate, however often the destination pushes back. */
const SLOWEST = 1 / 32;

/** How long the slowest rate takes to recover: older slow-downs matter no more. */
const RECOVERY_MS = (1 - SLOWEST) / RECOVERY_PER_MS;

/** How often a process reads the slow-downs the other processes recorded. */
const SLOWDOWNS_READ_EVERY_MS = 5_000;

/** How often paces back to where a new one starts (full rate, no slot promised) are dropped. */
const SWEEP_EVERY_MS = 10 * 60_000;

export interface Throttle {
  /**
   * Takes a slot for one message to `destination`: undefined to go now (after a wait of at most
   * THROTTLE_WAIT_MS), else the time (epoch ms) to come back for one.
   */
  admit(destination: string, signal: AbortSignal): Promise<number | undefined>;
  /** The destination pushed back (outcomes.ts, pushesBack): its rate halves, then recovers. */
  slowDown(destination: string): void;
}

/** What a throttle shares with the other processes (undefined on SQLite), and where it says a share failed. */
export interface ThrottleShares {
  windows: TakeFromWindow | undefined;
  slowdowns: SharedSlowdowns | undefined;
  log: Logger;
}

/** The recipients of `to`, not sent now: their destination has a slot for them at `until`. */
export function throttledAll(to: string[], destination: string, until: number): SendResult {
  const response = `Throttled by Mailroom: ${destination} is at its rate`;
  return resultForAll(to, { accepted: false, code: undefined, response, throttledUntil: until });
}

/**
 * A budget's pace: the share of its rule's rate it runs at, cut to `factor` at `pushedAt` and
 * recovering since; `tail` is the last slot promised to a message sent away, so that those sent away
 * together come back spread over the following slots instead of all at once.
 */
interface Pace {
  factor: number;
  pushedAt: number;
  tail: number;
}

const factorOf = (pace: Pace | undefined, now: number) => (pace ? Math.min(1, pace.factor + (now - pace.pushedAt) * RECOVERY_PER_MS) : 1);

/**
 * The window of a rule run at `factor` of its rate: a second, or as long as one message takes at a
 * slower rate (300/h: 12 s), doubled while a slowed rate would not fill it, so that each window holds
 * a whole number of messages, at least one, and its length changes in steps, not as the rate recovers.
 * A quiet destination takes a window's worth at once.
 */
function windowOf(rule: ThrottleRule, factor: number): { windowMs: number; perWindow: number } {
  const rate = rule.perSecond * factor;
  let windowMs = Math.max(1000, Math.ceil(1000 / rule.perSecond));
  while (rate * windowMs < 999.999) windowMs *= 2; // within rounding: 300/h fills 12 s
  return { windowMs, perWindow: Math.max(1, Math.floor((rate * windowMs) / 1000 + 1e-6)) };
}

/** The throttle of `rules` (config.ts); undefined when there are none, so sends pay nothing for it. */
export function createThrottle(rules: readonly ThrottleRule[], clock: Clock, shares: ThrottleShares): Throttle | undefined {
  if (rules.length === 0) return undefined;
  const named = new Map(rules.filter((rule) => rule.name !== '*').map((rule) => [rule.name, rule]));
  const others = rules.find((rule) => rule.name === '*');
  const windows = createWindowBudget(clock, shares.windows);
  const paces = new Map<string, Pace>();
  let sweptAt = clock.now();
  let slowdownsReadAt = -Infinity;
  let reading: Promise<void> | undefined;

  /**
   * The budget of `destination`: a named rule matches itself and its subdomains, the longest name
   * first, and all it matches share one budget; `*` gives every other destination one of its own.
   */
  function budgetOf(destination: string): { key: string; rule: ThrottleRule } | undefined {
    const name = destination.toLowerCase().replace(/\.$/, '');
    for (let suffix = name; ; ) {
      const rule = named.get(suffix);
      if (rule) return { key: suffix, rule };
      const dot = suffix.indexOf('.');
      if (dot === -1) break;
      suffix = suffix.slice(dot + 1);
    }
    return others && { key: `*${name}`, rule: others };
  }

  function paceOf(key: string, now: number): Pace {
    if (now - sweptAt > SWEEP_EVERY_MS) {
      sweptAt = now;
      for (const [other, pace] of paces) if (factorOf(pace, now) === 1 && pace.tail <= now) paces.delete(other);
    }
    let pace = paces.get(key);
    if (!pace) paces.set(key, (pace = { factor: 1, pushedAt: -Infinity, tail: now }));
    return pace;
  }

  function adopt(slowdown: Slowdown, now: number): void {
    const pace = paceOf(slowdown.destination, now);
    if (slowdown.pushed_at > pace.pushedAt) [pace.factor, pace.pushedAt] = [slowdown.factor, slowdown.pushed_at];
  }

  /** Takes in the slow-downs other processes recorded, every few seconds: one read, which admissions wait for. */
  async function readSlowdowns(now: number): Promise<void> {
    if (!shares.slowdowns || now - slowdownsReadAt < SLOWDOWNS_READ_EVERY_MS) return reading;
    slowdownsReadAt = now;
    reading = shares.slowdowns.since(now - RECOVERY_MS).then(
      (slowdowns) => slowdowns.forEach((slowdown) => adopt(slowdown, now)),
      (error: unknown) => {
        if (!faultOf(error)) shares.log.warn({ err: error }, 'could not read the destinations other workers slowed down; trying again in 5 s');
      },
    );
    return reading;
  }

  return {
    async admit(destination, signal) {
      const budget = budgetOf(destination);
      if (!budget) return undefined;
      for (let waited = false; ; waited = true) {
        const now = clock.now();
        await readSlowdowns(now);
        const { windowMs, perWindow } = windowOf(budget.rule, factorOf(paces.get(budget.key), now));
        const take = await windows.take(budget.key, perWindow, windowMs);
        if (take.allowed) return undefined;
        if (!waited && take.resetMs <= THROTTLE_WAIT_MS) {
          await sleep(take.resetMs, undefined, { signal });
          continue;
        }
        const pace = paceOf(budget.key, now);
        pace.tail = Math.max(pace.tail + windowMs / perWindow, now + take.resetMs);
        return Math.ceil(pace.tail);
      }
    },
    slowDown(destination) {
      const budget = budgetOf(destination);
      if (!budget) return;
      const now = clock.now();
      const pace = paceOf(budget.key, now);
      if (now - pace.pushedAt < SLOW_DOWN_EVERY_MS) return;
      [pace.factor, pace.pushedAt] = [Math.max(SLOWEST, factorOf(pace, now) / 2), now];
      windows.spend(budget.key); // no burst: what is left of this window goes unused
      shares.slowdowns?.record({ destination: budget.key, factor: pace.factor, pushed_at: now }, SLOW_DOWN_EVERY_MS).catch((error: unknown) => {
        if (!faultOf(error)) shares.log.warn({ err: error, destination: budget.key }, 'could not share a slow-down with the other workers');
      });
    },
  };
}
