// A sending domain's daily cap (warm-up, PATCH /domains/:id {daily_limit}): the messages it may send a
// UTC day, counted in the database so that every worker shares it; what is over it waits for the next
// day. Sends under way at once read the same count, so the cap can be passed by a few.
import type { Context } from '../../context.ts';
import type { Tx } from '../../store/db.ts';
import { addSent, sentOn } from '../../store/domain-daily-sends.ts';
import type { DomainRow } from '../../store/domains.ts';

/** What a capped domain may still send today, and when the next UTC day begins (epoch ms). */
export interface DailyAllowance {
  domainId: string;
  day: string;
  remaining: number;
  nextDay: number;
}

/** The allowance of `domain` now; undefined when it has no daily limit. */
export async function dailyAllowance(ctx: Context, domain: Pick<DomainRow, 'id' | 'daily_limit'> | undefined): Promise<DailyAllowance | undefined> {
  if (!domain || domain.daily_limit === null) return undefined;
  const now = new Date(ctx.clock.now());
  const day = now.toISOString().slice(0, 10);
  const sent = await sentOn(ctx.db, domain.id, day);
  const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return { domainId: domain.id, day, remaining: Math.max(0, domain.daily_limit - sent), nextDay };
}

/** Counts `count` messages sent on the allowance's day, in the transaction that records them. */
export async function countSent(tx: Tx, allowance: DailyAllowance, count: number): Promise<void> {
  if (count > 0) await addSent(tx, allowance.domainId, allowance.day, count);
}
