import type { Context } from '../context.ts';
import { WORKER_STALE_MS } from '../jobs/runner.ts';
import type { Fault } from '../store/availability.ts';
import { findDeliveryPauses } from '../store/workers.ts';

const IS: Record<Fault, string> = { unavailable: 'unavailable', read_only: 'read-only', full: 'full' };

/**
 * What a health check says of the database, asked now (a hung server counts as down after 2 s):
 * nothing while it works, else its fault and a sentence naming it, for the 503 of every GET /health.
 */
export async function databaseDown(ctx: Context): Promise<{ database: Fault; message: string } | undefined> {
  const outage = await ctx.availability.check();
  if (!outage) return undefined;
  return { database: outage.fault, message: `The database is ${IS[outage.fault]} (since ${new Date(outage.since).toISOString()}: ${outage.message}).` };
}

/**
 * Why delivery is paused as a whole (the relay cannot be reached, or refuses our login or envelope
 * sender), as the live workers' heartbeat rows say, for GET /health and the dashboard; else undefined.
 */
export async function deliveryPaused(ctx: Context): Promise<string | undefined> {
  const pauses = await findDeliveryPauses(ctx.db, ctx.clock.now() - WORKER_STALE_MS);
  return pauses.length > 0 ? pauses.join(' ') : undefined;
}
