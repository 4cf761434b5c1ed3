import type { Clock } from '../../clock.ts';
import type { Context } from '../../context.ts';
import type { ApiKeyRow } from '../../store/api-keys.ts';
import type { TakeFromWindow } from '../../store/rate-limit-windows.ts';

// Requests per API key and second, as Resend counts them: fixed one-second windows, aligned on the
// clock's seconds so that every process agrees on when a window starts.
//
// Each process serves a key's requests from a local budget for the current window and takes more when
// it runs out. On PostgreSQL several API processes share a key's limit: a process takes a tenth of it
// at a time with one statement (store/rate-limit-windows.ts), and the total taken per window never
// passes the limit, so a round trip serves a tenth of the limit rather than one request. On SQLite the
// process is the only one counting: it takes the whole limit at once, in memory.

/** Resend's window: a second. */
export const RATE_WINDOW_MS = 1000;

/** On PostgreSQL a process takes this fraction of a key's limit at a time. */
const SHARES = 10;

/** Windows kept for this many keys at most; beyond, they start over (a second's counts, at worst). */
const MAX_KEYS = 10_000;

/** The requests per second `key` may make: its own rate_limit, else MAILROOM_RATE_LIMIT; null: no limit. */
export function effectiveRateLimit(ctx: Context, key: ApiKeyRow): number | null {
  return key.rate_limit ?? ctx.config.http.rateLimit ?? null;
}

/** The answer for one request: served or not, what remains in the window, and how long until it ends. */
export interface RateTake {
  allowed: boolean;
  remaining: number;
  resetMs: number;
}

export interface RateBudget {
  /** Counts one request of `keyId` against `limit` requests per window. */
  take(keyId: string, limit: number): Promise<RateTake>;
}

interface Window {
  start: number;
  /** Requests this process may still serve without asking. */
  left: number;
  /** What of the limit no process had taken when this one last asked: none left means refuse. */
  spare: number;
  /** The request for more under way: others wait for it rather than ask too. */
  asking: Promise<void> | undefined;
}

/** A process's budgets; `takeShared` shares them with the other processes (store/rate-limit-windows.ts), else it counts alone. */
export function createRateBudget(clock: Clock, takeShared: TakeFromWindow | undefined): RateBudget {
  const windows = new Map<string, Window>();

  async function askForMore(keyId: string, window: Window, limit: number): Promise<void> {
    if (!takeShared) {
      window.left += window.spare;
      window.spare = 0;
      return;
    }
    const count = Math.min(Math.ceil(limit / SHARES), window.spare);
    const taken = await takeShared(keyId, window.start, count);
    // The total before this count was taken - count: what of the count fits under the limit is ours.
    window.left += Math.max(0, Math.min(count, limit - (taken - count)));
    window.spare = Math.max(0, limit - taken);
  }

  return {
    async take(keyId, limit) {
      for (;;) {
        const now = clock.now();
        const start = now - (now % RATE_WINDOW_MS);
        let window = windows.get(keyId);
        if (window === undefined || window.start !== start) {
          if (windows.size >= MAX_KEYS) windows.clear();
          window = { start, left: 0, spare: limit, asking: undefined };
          windows.set(keyId, window);
        }
        const resetMs = start + RATE_WINDOW_MS - now;
        if (window.left > 0) {
          window.left--;
          return { allowed: true, remaining: window.left + window.spare, resetMs };
        }
        if (window.spare === 0) return { allowed: false, remaining: 0, resetMs };
        const asked = window;
        await (asked.asking ??= askForMore(keyId, asked, limit).finally(() => (asked.asking = undefined)));
      }
    },
  };
}
