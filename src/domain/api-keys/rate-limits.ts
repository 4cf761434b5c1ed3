import type { Clock } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import type { ApiKeyRow } from '../../store/api-keys.ts';
import { createWindowBudget, type TakeFromWindow, type WindowTake } from '../../limits/window-budget.ts';

// Requests per API key and second, as Resend counts them: fixed one-second windows, shared on
// PostgreSQL by the API processes (window-budget.ts, store/rate-limit-windows.ts).

/** Resend's window: a second. */
export const RATE_WINDOW_MS = 1000;

/**
 * The requests per second `key` may make: its own rate_limit, else its project's, else
 * MAILROOM_RATE_LIMIT; null: no limit.
 */
export async function effectiveRateLimit(ctx: Context, key: ApiKeyRow): Promise<number | null> {
  if (key.rate_limit !== null) return key.rate_limit;
  const project = await ctx.projects.find(key.project_id);
  return project?.rate_limit ?? ctx.config.http.rateLimit ?? null;
}

export interface RateBudget {
  /** Counts one request of `keyId` against `limit` requests per window. */
  take(keyId: string, limit: number): Promise<WindowTake>;
}

/** A process's request budgets; `takeShared` shares them with the other API processes, else it counts alone. */
export function createRateBudget(clock: Clock, takeShared: TakeFromWindow | undefined): RateBudget {
  const windows = createWindowBudget(clock, takeShared);
  return { take: (keyId, limit) => windows.take(keyId, limit, RATE_WINDOW_MS) };
}
