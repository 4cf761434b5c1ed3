import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import type { Tx } from '../../store/db.ts';
import { findDeliverability, saveDeliverability, type DeliverabilityRow } from '../../store/domain-deliverability.ts';
import { findDomain, findDomainById, type DomainRow } from '../../store/domains.ts';
import { logEvents } from '../events/event-log.ts';
import { domainEvent } from '../sending-domains/domains.ts';
import { checkAlignment, checkDkim, checkDmarc } from './auth-checks.ts';
import { checkBlocklists } from './blocklists.ts';
import { worstOf, type DeliverabilityCheck } from './check.ts';
import { checkDmarcReports } from './dmarc-reports-check.ts';
import { createLookups } from './lookups.ts';
import { checkMtaSts, checkTlsRpt } from './policy-records.ts';
import { checkReturnPath } from './return-path.ts';
import { senderOf } from './sender.ts';
import { checkFcrdns, checkPtr, reverseNames, sendingAddresses } from './sending-addresses.ts';
import { checkBounceRate, checkBulkSender, checkComplaintRate, sendingRecord } from './sending-rates.ts';
import { checkSpf } from './spf-check.ts';

// GET and POST /domains/:id/deliverability: why a domain's mail would land in spam, check by check,
// each with its fix. The last check is kept (domain_deliverability); a change of its overall status is
// a domain.updated event. The daily run is daily-checks.ts.

/** Every check of a domain now, in the order the API lists them. */
export async function runChecks(ctx: Context, domain: DomainRow, now: number): Promise<DeliverabilityRow> {
  const sender = senderOf(domain, ctx.config, createLookups(ctx.dns), now);
  const addresses = await sendingAddresses(sender);
  const [spf, dkim, dmarc, returnPath, names, mtaSts, tlsRpt, record] = await Promise.all([
    checkSpf(sender, addresses.sending, addresses.host),
    checkDkim(sender),
    checkDmarc(sender),
    checkReturnPath(sender),
    reverseNames(sender, addresses),
    checkMtaSts(sender),
    checkTlsRpt(sender),
    sendingRecord(ctx, domain, now),
  ]);
  const [fcrdns, blocklists, dmarcReports] = await Promise.all([
    checkFcrdns(sender, addresses, names),
    checkBlocklists(sender, addresses),
    checkDmarcReports(ctx, sender, addresses.sending, dmarc.tags),
  ]);
  const checks: DeliverabilityCheck[] = [
    spf.check,
    dkim,
    dmarc.check,
    checkAlignment(sender, dkim, spf.authorized, dmarc),
    returnPath,
    checkPtr(sender, addresses, names),
    fcrdns,
    blocklists,
    mtaSts,
    tlsRpt,
    checkBulkSender(domain.name, ctx.config.publicUrl, record, [spf.check, dkim, dmarc.check]),
    checkBounceRate(domain.name, record),
    checkComplaintRate(domain.name, record),
    dmarcReports,
  ];
  return { domain_id: domain.id, status: worstOf(checks.map((check) => check.status)), checks, checked_at: toTimestamp(now) };
}

/**
 * Keeps a domain's new check, in the caller's transaction; a change of the overall status from the
 * last check's is a domain.updated event (the first check is none). False when the domain is gone.
 */
export async function recordChecks(ctx: Context, tx: Tx, result: DeliverabilityRow): Promise<boolean> {
  const domain = await findDomainById(tx, result.domain_id);
  if (!domain) return false;
  // Locked: two checks of a domain at once tell one change once.
  const before = await findDeliverability(tx, result.domain_id, true);
  await saveDeliverability(tx, result);
  if (before && before.status !== result.status) {
    const event = domainEvent(ctx, 'domain.updated', domain);
    const deliverability = { status: result.status, previous_status: before.status, checked_at: isoTime(result.checked_at) };
    await logEvents(ctx, tx, [{ ...event, data: { ...event.data, deliverability } }], result.checked_at);
  }
  return true;
}

const answer = (domain: DomainRow, row: DeliverabilityRow) => ({
  object: 'deliverability' as const,
  domain_id: domain.id,
  name: domain.name,
  checked_at: row.checked_at,
  status: row.status,
  checks: row.checks,
});

/** POST /domains/:id/deliverability: every check now, kept, and answered. */
export async function checkDeliverability(ctx: Context, project: string, id: string) {
  const domain = await findDomain(ctx.db, project, id);
  if (!domain) throw notFound('Domain');
  const result = await runChecks(ctx, domain, ctx.clock.now());
  const kept = await ctx.writer.transaction((tx) => recordChecks(ctx, tx, result));
  if (!kept) throw notFound('Domain');
  return answer(domain, result);
}

/** A domain's last check as the API answers it; null when never checked (the dashboard says so, and offers to check). */
export async function lastDeliverability(ctx: Context, project: string, id: string) {
  const domain = await findDomain(ctx.db, project, id);
  if (!domain) throw notFound('Domain');
  const last = await findDeliverability(ctx.db, id);
  return last ? answer(domain, last) : null;
}

/** GET /domains/:id/deliverability: the last check; a domain never checked is checked now. */
export async function getDeliverability(ctx: Context, project: string, id: string) {
  return (await lastDeliverability(ctx, project, id)) ?? checkDeliverability(ctx, project, id);
}
