import type { Context } from '../../context.ts';
import { countByProject } from '../../store/project-usage.ts';
import { period } from '../metrics/usage.ts';

// What each project used, for the admin's projects page: emails today and this month (UTC, as GET
// /usage and the quotas count them), domains and keys.

/** The counts of each of `ids`, in one query whatever their number. */
export async function projectUsage(ctx: Context, ids: string[]) {
  const now = new Date(ctx.clock.now());
  const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  const today = period(ctx, Date.UTC(year, month, day), Date.UTC(year, month, day + 1));
  const thisMonth = period(ctx, Date.UTC(year, month, 1), Date.UTC(year, month + 1, 1));
  return countByProject(ctx.db, ids, today, thisMonth);
}
