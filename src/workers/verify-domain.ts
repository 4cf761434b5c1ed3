import { toTimestamp } from '../clock.ts';
import type { Context } from '../context.ts';
import { logEvents } from '../domain/events/event-log.ts';
import { domainEvent } from '../domain/sending-domains/domains.ts';
import { domainRecords } from '../domain/sending-domains/domain-records.ts';
import { assessVerification, findPublishedRecords, RECHECK_VERIFIED_MS, scheduleCheck } from '../domain/sending-domains/domain-verification.ts';
import type { Job } from '../domain/jobs.ts';
import { findDomain, recordStatusesText, setVerification } from '../store/domains.ts';
import { completeJob, retryJob } from '../store/jobs.ts';
import { backoffMs } from './runner.ts';

/**
 * Looks a domain's records up in DNS and records its new status with the next check, in one
 * transaction: again with the runner's backoff while records are missing (the 72-hour window ends
 * it), daily once verified, never after it failed.
 */
export async function verifyDomainTask(ctx: Context, job: Job<'verify-domain'>): Promise<void> {
  const { domain_id: domainId } = job.payload;
  const domain = await findDomain(ctx.db, domainId);
  if (!domain) return completeJob(ctx.db, job.id);

  const records = domainRecords(domain, ctx.config);
  const found = await findPublishedRecords(ctx.dns, records);
  const now = ctx.clock.now();
  const { verification, next } = assessVerification(domain, records, found, now);
  await ctx.writer.transaction(async (tx) => {
    // A capability switched during the lookups changed the records (and the check it scheduled left
    // this running one alone): look again, with the new ones.
    const current = await findDomain(tx, domainId);
    if (current?.sending !== domain.sending || current.receiving !== domain.receiving) return retryJob(tx, job.id, now, 'capabilities switched during the check');
    await setVerification(tx, domainId, verification);
    // An application hears of a change of status, not of each check.
    if (verification.status !== domain.status) {
      await logEvents(ctx, tx, [domainEvent(ctx, 'domain.updated', { ...domain, ...verification })], toTimestamp(now));
    }
    if (next === 'backoff') return retryJob(tx, job.id, now + backoffMs(job.attempts), `records not found: ${recordStatusesText(verification.record_statuses)}`);
    await completeJob(tx, job.id);
    // A fresh job restarts the count of checks, and so the backoff.
    if (next === 'daily') await scheduleCheck(ctx, tx, domainId, now + RECHECK_VERIFIED_MS);
    if (next === 'restart') await scheduleCheck(ctx, tx, domainId, now + backoffMs(0));
  });
  ctx.domains.clear();
}
