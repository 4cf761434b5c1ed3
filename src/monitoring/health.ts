import type { Context } from '../context.ts';
import type { Fault } from '../store/availability.ts';

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
