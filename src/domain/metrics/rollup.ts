import { isoTime } from '../../time/clock.ts';
import type { EmailMetricRow } from '../../store/email-metrics.ts';
import { asciiDomain, domainOf, parseMailbox } from '../recipients/addresses.ts';
import { eventMetrics, type CountedEvent } from './metric-names.ts';

// The rollup's key: a count per 15-minute UTC slot. Every IANA zone's offset since 1980 is a multiple
// of 15 minutes, so an hour, a day, a week or a month of any zone is a whole number of slots.

export const SLOT_MS = 15 * 60_000;

/** The start of the slot holding an instant (epoch ms). */
export const slotOf = (ms: number): number => Math.floor(ms / SLOT_MS) * SLOT_MS;

/** The instant of one of our timestamps ("2026-11-22 23:41:11.894+00"). */
export const instantOf = (timestamp: string): number => Date.parse(isoTime(timestamp));

/** The domain a stored `from` sends from: its address's, already lower-case ASCII. */
export const senderDomain = (from: string): string => domainOf(parseMailbox(from, 'from').address);

/** An event as the rollup counts it: when, and whether it is its recipient's first open or click. */
export interface RolledEvent extends CountedEvent {
  created_at: string;
  first?: boolean;
}

/** The rollup increments of some events of one email (or received message) of a project, by the one rule. */
export function rollupRows(project: string, domain: string, broadcastId: string | null, events: RolledEvent[]): EmailMetricRow[] {
  const rows: EmailMetricRow[] = [];
  for (const event of events) {
    const metrics = eventMetrics(event, event.first ?? false);
    if (metrics.length === 0) continue;
    const slot = slotOf(instantOf(event.created_at));
    for (const metric of metrics) rows.push({ project_id: project, slot, domain, broadcast_id: broadcastId ?? '', metric, count: 1 });
  }
  return rows;
}

/** The increments of a received message: one `received` per envelope recipient, under its domain. */
export function receivedRows(project: string, receivedFor: string[], createdAt: string): EmailMetricRow[] {
  return receivedFor.flatMap((address) => {
    const domain = domainOf(address);
    return rollupRows(project, asciiDomain(domain) ?? domain.toLowerCase(), null, [{ type: 'received', response: null, bot: 0, created_at: createdAt }]);
  });
}
