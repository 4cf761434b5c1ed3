import type { Resolver } from 'node:dns/promises';
import { isAbsent, lookupTxt } from '../../dns.ts';
import type { Context } from '../../context.ts';
import type { DomainRow, RecordKey, RecordStatuses, Verification } from '../../store/domains.ts';
import type { Tx } from '../../store/db.ts';
import type { DnsRecord } from './domain-records.ts';
import { jobKey, replace } from '../../jobs/enqueue.ts';

// Resend's statuses. A domain is `not_started` until its first verify call, then `pending` (no
// required record found yet) or `partially_verified` (some), `verified` once all are published, and
// `failed` when they are not within 72 hours. A verified domain whose records disappear is in
// `temporary_failure` and re-checked for 72 hours before it fails. The required records are those of
// sending (domain-records.ts): the status says whether the domain may send.

export const VERIFY_WINDOW_MS = 72 * 3600_000;
/** A verified domain is looked up again this often, to notice records that disappear. */
export const RECHECK_VERIFIED_MS = 24 * 3600_000;

/** The statuses that may send: a verified domain keeps sending while a lost record is re-checked. */
export const SENDABLE = new Set(['verified', 'temporary_failure']);

/** What happens after a check: stop, look again with backoff, or start a fresh series of checks. */
export type NextCheck = 'stop' | 'backoff' | 'restart' | 'daily';

export const verifyJobKey = (domainId: string) => jobKey('verify-domain', domainId);

/** Schedules the check of a domain's records at `runAt`, in place of any waiting one: one per domain. */
export async function scheduleCheck(ctx: Context, tx: Tx, domainId: string, runAt: number): Promise<void> {
  await replace(ctx, tx, 'verify-domain', { domain_id: domainId }, { key: verifyJobKey(domainId), runAt });
}

const sameHost = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();
const normalizeTxt = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

/** The `p=` tag of a DKIM key record, without the whitespace a DNS provider may have added. */
export function dkimPublicKey(text: string): string | undefined {
  const tag = text.split(';').map((part) => part.trim()).find((part) => part.startsWith('p='));
  return tag?.slice(2).replace(/\s+/g, '');
}

async function isPublished(resolver: Resolver, record: DnsRecord): Promise<boolean> {
  if (record.type === 'MX') {
    const mx = await resolver.resolveMx(record.fqdn).catch((error: Error) => (isAbsent(error) ? [] : Promise.reject(error)));
    return mx.some((entry) => sameHost(entry.exchange, record.value));
  }
  if (record.type === 'CNAME') {
    const names = await resolver.resolveCname(record.fqdn).catch((error: Error) => (isAbsent(error) ? [] : Promise.reject(error)));
    return names.some((name) => sameHost(name, record.value));
  }
  const txt = await lookupTxt(resolver, record.fqdn);
  if (record.key === 'dkim') return txt.some((text) => dkimPublicKey(text) === dkimPublicKey(record.value));
  if (record.key === 'dmarc') return txt.some((text) => /^v=DMARC1\s*(;|$)/i.test(text.trim()));
  return txt.some((text) => normalizeTxt(text) === normalizeTxt(record.value));
}

/** The records found in DNS as expected. A lookup that fails counts as not found this time. */
export async function findPublishedRecords(resolver: Resolver, records: DnsRecord[]): Promise<Set<RecordKey>> {
  const found = await Promise.all(records.map((r) => isPublished(resolver, r).then((ok) => ok && r.key, () => false)));
  return new Set(found.filter((key): key is RecordKey => key !== false));
}

/** The domain's new verification state after a check that found `found`, and when to check again. */
export function assessVerification(
  domain: Pick<DomainRow, 'status' | 'verify_started_at'>,
  records: DnsRecord[],
  found: Set<RecordKey>,
  now: number,
): { verification: Verification; next: NextCheck } {
  const required = records.filter((r) => r.required);
  const complete = required.every((r) => found.has(r.key));
  const wasVerified = SENDABLE.has(domain.status);
  // Losing a record starts a window of its own; otherwise the window began at the verify call.
  const windowStart = domain.status === 'verified' ? now : (domain.verify_started_at ?? now);
  const expired = !complete && now - windowStart >= VERIFY_WINDOW_MS;
  const missing = expired ? 'failed' : wasVerified ? 'temporary_failure' : 'pending';
  const statuses = Object.fromEntries(
    records.map((r) => [r.key, found.has(r.key) ? 'verified' : r.required ? missing : 'pending']),
  ) as RecordStatuses;

  let status: string;
  let next: NextCheck;
  if (complete) [status, next] = ['verified', 'daily'];
  else if (expired) [status, next] = ['failed', 'stop'];
  else if (wasVerified) [status, next] = ['temporary_failure', domain.status === 'verified' ? 'restart' : 'backoff'];
  else [status, next] = [required.some((r) => found.has(r.key)) ? 'partially_verified' : 'pending', 'backoff'];

  const verification = {
    status,
    record_statuses: statuses,
    verify_started_at: complete || expired ? null : windowStart,
  };
  return { verification, next };
}

/**
 * What POST /domains/:id/verify changes before its check runs: a domain not (yet) verified starts a
 * new 72-hour window with its missing records pending; a verified one is only checked again.
 */
export function restartVerification(domain: Pick<DomainRow, 'status' | 'record_statuses' | 'verify_started_at'>, now: number): Verification {
  const { status: current, record_statuses, verify_started_at } = domain;
  if (SENDABLE.has(current)) return { status: current, record_statuses, verify_started_at };
  // A copy: the row's own statuses stay as read.
  const statuses = { ...record_statuses };
  for (const key of Object.keys(statuses) as RecordKey[]) {
    if (statuses[key] !== 'verified') statuses[key] = 'pending';
  }
  const status = current === 'partially_verified' ? 'partially_verified' : 'pending';
  return { status, record_statuses: statuses, verify_started_at: now };
}

/**
 * What switching capabilities (PATCH) changes, and whether to check now; undefined when nothing
 * changes (a record switched off is only no longer listed). The records switched on start
 * `not_started` on a domain whose checks have not begun or have stopped (`not_started`, `failed`: the
 * verify call looks them up), else `pending`, checked at once. Switching sending changes what the
 * status speaks for (the sending records, or the Receiving one of a domain that only receives), so a
 * checked domain is `pending` again, in a new 72-hour window.
 */
export function switchVerification(
  domain: Pick<DomainRow, 'status' | 'record_statuses' | 'verify_started_at'>,
  added: RecordKey[],
  sendingSwitched: boolean,
  now: number,
): { verification: Verification; check: boolean } | undefined {
  if (added.length === 0 && !sendingSwitched) return undefined;
  const check = domain.status !== 'not_started' && domain.status !== 'failed';
  const statuses = { ...domain.record_statuses };
  for (const key of added) statuses[key] = check ? 'pending' : 'not_started';
  const restart = check && sendingSwitched;
  const verification = {
    status: restart ? 'pending' : domain.status,
    record_statuses: statuses,
    verify_started_at: restart ? now : domain.verify_started_at,
  };
  return { verification, check };
}
