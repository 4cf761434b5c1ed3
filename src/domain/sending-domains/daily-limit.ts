// A sending domain's daily cap: its warm-up's volume for the day while one runs (warmup.ts), else its
// flat daily_limit. Counted in the database so that every worker shares it; what is over it waits for
// the next UTC day, and the emails that wait get the next day's slots oldest first. Slots are taken
// before a send and the unused ones given back with its outcome, so sends under way at once never pass
// the cap (a crash between the two costs the day a few slots).
import type { Context } from '../../context.ts';
import type { Tx } from '../../store/db.ts';
import { addSent, lockDay } from '../../store/domain-daily-sends.ts';
import type { DomainRow } from '../../store/domains.ts';
import { countWaitingAhead, releaseWaitingTurn } from '../../store/emails.ts';
import { toTimestamp } from '../../time/clock.ts';
import { PENDING_STATES } from '../events/email-events.ts';
import { warmupDay, warmupVolume } from './warmup.ts';

export type CapReason = 'warmup' | 'daily_limit';

/** The slots one send took from its domain's cap today, and when the next UTC day begins (epoch ms). */
export interface DailyAllowance {
  domainId: string;
  day: string;
  reason: CapReason;
  granted: number;
  nextDay: number;
}

type Capped = Pick<DomainRow, 'id' | 'daily_limit' | 'warmup_start' | 'warmup_days' | 'warmup_started_at'>;

/** The domain's cap at `now` and why; undefined when it has none (no warm-up running, no daily_limit). */
export function dailyCap(domain: Capped, now: number): { limit: number; reason: CapReason } | undefined {
  if (domain.warmup_start !== null && domain.warmup_days !== null && domain.warmup_started_at !== null) {
    const startedAt = Number(domain.warmup_started_at);
    const volume = warmupVolume({ start: domain.warmup_start, days: domain.warmup_days }, warmupDay(startedAt, now));
    if (volume !== null) return { limit: volume, reason: 'warmup' };
  }
  return domain.daily_limit === null ? undefined : { limit: domain.daily_limit, reason: 'daily_limit' };
}

/**
 * Takes up to `wanted` of today's slots for one send of `emailId`, leaving first those the older emails
 * waiting for this cap need (oldest first); undefined when the domain has no cap.
 */
export async function takeAllowance(ctx: Context, domain: Capped | undefined, emailId: string, wanted: number): Promise<DailyAllowance | undefined> {
  const now = ctx.clock.now();
  const cap = domain && dailyCap(domain, now);
  if (!domain || !cap) return undefined;
  const date = new Date(now);
  const day = date.toISOString().slice(0, 10);
  const granted =
    wanted === 0
      ? 0
      : await ctx.writer.transaction(async (tx) => {
          const sent = await lockDay(tx, domain.id, day);
          const ahead = await countWaitingAhead(tx, domain.id, emailId, toTimestamp(now), PENDING_STATES);
          const slots = Math.max(0, Math.min(wanted, cap.limit - sent - ahead));
          if (slots > 0) await addSent(tx, domain.id, day, slots);
          if (slots === wanted) await releaseWaitingTurn(tx, emailId);
          return slots;
        });
  const nextDay = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return { domainId: domain.id, day, reason: cap.reason, granted, nextDay };
}

/** Gives back the slots taken for messages that were not sent after all, in the transaction that records the send. */
export async function giveBack(tx: Tx, allowance: DailyAllowance, sent: number): Promise<void> {
  if (allowance.granted > sent) await addSent(tx, allowance.domainId, allowance.day, sent - allowance.granted);
}
