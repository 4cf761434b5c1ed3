import type { Context } from '../../context.ts';
import { FreshCache } from '../../store/fresh-cache.ts';
import { findDomainById, pauseSending, type DomainRow } from '../../store/domains.ts';
import { toTimestamp } from '../../time/clock.ts';
import { logEvents } from '../events/event-log.ts';
import { slotOf, SLOT_MS } from '../metrics/rollup.ts';
import { domainEvent, pauseOf, type SendingPause } from '../sending-domains/domains.ts';
import { percent } from './check.ts';
import { ratio, sendingRecord } from './sending-rates.ts';

// The guards: a domain whose bounces or complaints over the last 24 hours pass a fail line pauses its
// marketing mail (broadcasts, automations) before mailbox providers block all of it; transactional
// mail goes on. Checked where marketing mail is about to go, so that paused mail waits, not fails.

const GUARD_HOURS = 24;

// A verdict of "under the lines" is trusted for a second: a query per domain and second, not per email.
const verdicts = new WeakMap<Context, FreshCache<string, string | null>>();

/**
 * Why the domain's last 24 hours pass a fail line, or null. Counted from the first whole rollup slot
 * after the last resume, so the bounces that paused it do not pause it again.
 */
async function tripped(ctx: Context, domain: DomainRow, now: number): Promise<string | null> {
  const { minSends, bounceRate, complaintRate } = ctx.config.guards;
  const resumed = domain.sending_resumed_at === null ? 0 : slotOf(Number(domain.sending_resumed_at)) + SLOT_MS;
  const record = await sendingRecord(ctx, domain, now, Math.max(now - GUARD_HOURS * 3_600_000, resumed));
  // A recipient refused during the SMTP transaction bounces without a `sent`: the sends are both. A
  // bounce reported after a `sent` counts twice, which near a fail line understates the rate by 1/(1 + rate).
  const sends = record.sent + record.bounced;
  if (sends < minSends) return null;
  const bounces = ratio(record.bounced, sends);
  if (bounces > bounceRate) return `Bounce rate ${percent(bounces)} (${record.bounced} of ${sends} sends in the last ${GUARD_HOURS} hours) is above ${percent(bounceRate)}.`;
  const complaints = ratio(record.complained, record.delivered);
  if (complaints > complaintRate) return `Complaint rate ${percent(complaints)} (${record.complained} of ${record.delivered} messages delivered in the last ${GUARD_HOURS} hours) is above ${percent(complaintRate)}.`;
  return null;
}

/**
 * The pause of `domain`'s marketing mail: the one it records, or a new one when its rates pass a fail
 * line now, recorded once (whichever process sees it first) with its `domain.updated` event.
 */
export async function marketingPause(ctx: Context, domain: DomainRow): Promise<SendingPause | null> {
  const recorded = pauseOf(domain);
  if (recorded) return recorded;
  let cache = verdicts.get(ctx);
  if (!cache) verdicts.set(ctx, (cache = new FreshCache(1000, 10_000)));
  const now = ctx.clock.now();
  const reason = await cache.get(`${domain.id}:${domain.sending_resumed_at}`, () => tripped(ctx, domain, now), (verdict) => verdict === null);
  if (reason === null) return null;
  const since = toTimestamp(now);
  const row = await ctx.writer.transaction(async (tx) => {
    const first = await pauseSending(tx, domain.id, reason, since);
    const after = await findDomainById(tx, domain.id);
    if (first && after) await logEvents(ctx, tx, [domainEvent(ctx, 'domain.updated', after)], since);
    if (first) ctx.writer.afterCommit(tx, () => ctx.log.warn({ domain: domain.name, reason }, 'marketing mail paused'));
    return after;
  });
  ctx.domains.clear();
  return row ? pauseOf(row) : null;
}
