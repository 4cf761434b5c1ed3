import type { Clock } from '../time/clock.ts';

// Budgets of so many uses per fixed window, aligned on the clock so that every process agrees on when
// a window starts: an API key's requests a second (domain/api-keys/rate-limits.ts), a destination's
// messages (delivery/throttle.ts).
//
// Each process serves uses from a local budget for the current window and takes more when it runs out.
// On PostgreSQL several processes share a budget: a process takes a tenth of it at a time with one
// statement (a TakeFromWindow of the store), and the total taken per window never passes the limit, so
// a round trip serves a tenth of the limit rather than one use. Without a TakeFromWindow the process is
// the only one counting: it takes the whole limit at once, in memory.

/** Adds `count` to a key's window starting at `windowStart` (epoch ms); answers the window's total, the count included. */
export type TakeFromWindow = (key: string, windowStart: number, count: number) => Promise<number>;

/** On PostgreSQL a process takes this fraction of a limit at a time. */
const SHARES = 10;

/** Windows kept for this many keys at most; beyond, they start over (a window's counts, at worst). */
const MAX_KEYS = 10_000;

/** The answer for one use: allowed or not, what remains in the window, and how long until it ends. */
export interface WindowTake {
  allowed: boolean;
  remaining: number;
  resetMs: number;
}

export interface WindowBudget {
  /** Counts one use of `key` against `limit` uses per window of `windowMs`. */
  take(key: string, limit: number, windowMs: number): Promise<WindowTake>;
  /** No more uses of `key` in its current window, from this process. */
  spend(key: string): void;
}

interface Window {
  start: number;
  length: number;
  /** Uses this process may still serve without asking. */
  left: number;
  /** What of the limit no process had taken when this one last asked: none left means refuse. */
  spare: number;
  /** The request for more under way: others wait for it rather than ask too. */
  asking: Promise<void> | undefined;
}

/** A process's budgets; `takeShared` shares them with the other processes, else it counts alone. */
export function createWindowBudget(clock: Clock, takeShared: TakeFromWindow | undefined): WindowBudget {
  const windows = new Map<string, Window>();

  async function askForMore(key: string, window: Window, limit: number): Promise<void> {
    if (!takeShared) {
      window.left += window.spare;
      window.spare = 0;
      return;
    }
    const count = Math.min(Math.ceil(limit / SHARES), window.spare);
    const taken = await takeShared(key, window.start, count);
    // The total before this count was taken - count: what of the count fits under the limit is ours.
    window.left += Math.max(0, Math.min(count, limit - (taken - count)));
    window.spare = Math.max(0, limit - taken);
  }

  return {
    async take(key, limit, windowMs) {
      for (;;) {
        const now = clock.now();
        const start = now - (now % windowMs);
        let window = windows.get(key);
        if (window === undefined || window.start !== start || window.length !== windowMs) {
          if (windows.size >= MAX_KEYS) windows.clear();
          window = { start, length: windowMs, left: 0, spare: limit, asking: undefined };
          windows.set(key, window);
        }
        const resetMs = start + windowMs - now;
        if (window.left > 0) {
          window.left--;
          return { allowed: true, remaining: window.left + window.spare, resetMs };
        }
        if (window.spare === 0) return { allowed: false, remaining: 0, resetMs };
        const asked = window;
        await (asked.asking ??= askForMore(key, asked, limit).finally(() => (asked.asking = undefined)));
      }
    },
    spend(key) {
      const window = windows.get(key);
      if (window) window.left = window.spare = 0;
    },
  };
}
