import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { backoffMs, done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import { findDomainById, recordStatusesText, setVerification, type DomainRow } from '../../store/domains.ts';
import { logEvents } from '../events/event-log.ts';
import { domainRecords } from './domain-records.ts';
import { assessVerification, findPublishedRecords, RECHECK_VERIFIED_MS, scheduleCheck } from './domain-verification.ts';
import { domainEvent } from './domains.ts';

const switched = (domain: DomainRow, current: DomainRow | undefined) => current?.sending !== domain.sending || current.receiving !== domain.receiving;

/**
 * The `verify-domain` task: looks a domain's records up in DNS and records its new status with the
 * next check, with the job's end: again with the job's backoff while records are missing (the 72-hour
 * window ends it), daily once verified, never after it failed.
 */
export async function verifyDomain(ctx: Context, attempt: Attempt<'verify-domain'>): Promise<TaskResult> {
  const { domain_id: domainId } = attempt.payload;
  const domain = await findDomainById(ctx.db, domainId);
  if (!domain) return done();

  const records = domainRecords(domain, ctx.config);
  const found = await findPublishedRecords(ctx.dns, records);
  const now = ctx.clock.now();
  const { verification, next } = assessVerification(domain, records, found, now);
  // A capability switched during the lookups changed the records (and the check it scheduled left this
  // running one alone): look again at once, with the new ones.
  if (switched(domain, await findDomainById(ctx.db, domainId))) return { ending: { end: 'retry', error: 'capabilities switched during the check', at: now } };
  const write = async (tx: Parameters<NonNullable<TaskResult['write']>>[0]) => {
    ctx.writer.afterCommit(tx, () => ctx.domains.clear());
    // Switched since: a fresh check looks again.
    if (switched(domain, await findDomainById(tx, domainId))) return scheduleCheck(ctx, tx, domainId, now);
    await setVerification(tx, domainId, verification);
    // An application hears of a change of status, not of each check.
    if (verification.status !== domain.status) {
      await logEvents(ctx, tx, [domainEvent(ctx, 'domain.updated', { ...domain, ...verification })], toTimestamp(now));
    }
    // A fresh job restarts the count of checks, and so the backoff.
    if (next === 'daily') await scheduleCheck(ctx, tx, domainId, now + RECHECK_VERIFIED_MS);
    if (next === 'restart') await scheduleCheck(ctx, tx, domainId, now + backoffMs(0));
  };
  if (next === 'backoff') return { ending: { end: 'retry', error: `records not found: ${recordStatusesText(verification.record_statuses)}` }, write };
  return done(write);
}
