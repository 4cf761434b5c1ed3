import type { Context } from '../../context.ts';
import { AppError, missingField, notFound } from '../../errors.ts';
import { isUuid } from '../../time/ids.ts';
import * as store from '../../store/domains.ts';
import { domainRecords } from './domain-records.ts';
import { changeDomain, subdomain, verifyDomain } from './domains.ts';

// Resend's tracking domains (/domains/:id/tracking) are a domain's tracking subdomain: its Tracking
// CNAME to the host of MAILROOM_PUBLIC_URL, looked up with the domain's records, and once verified the
// origin of its tracked links and open pixels (tracking/tracked-html.ts). A domain has one at most;
// `tracking_subdomain` on POST and PATCH /domains sets the same one.

type TrackingStatus = 'pending' | 'verified' | 'failed';

/** The record's status as Resend's tracking domain says it: failed once the domain's checks have stopped without it. */
function statusOf(domain: store.DomainRow): TrackingStatus {
  if (domain.record_statuses.tracking === 'verified') return 'verified';
  return domain.status === 'failed' ? 'failed' : 'pending';
}

/** Resend's `tracking_domain` object. */
function toTrackingDomain(ctx: Context, domain: store.DomainRow) {
  const status = statusOf(domain);
  const record = domainRecords(domain, ctx.config).find((r) => r.key === 'tracking')!;
  return {
    object: 'tracking_domain' as const,
    id: domain.tracking_id!,
    name: domain.tracking_subdomain!,
    full_name: record.fqdn,
    status,
    records: [{ type: record.type, name: record.name, value: record.value, status }],
    created_at: domain.tracking_created_at!,
  };
}

async function findDomainOrThrow(ctx: Context, project: string, domainId: string): Promise<store.DomainRow> {
  const domain = isUuid(domainId) ? await store.findDomain(ctx.db, project, domainId.toLowerCase()) : undefined;
  if (!domain) throw notFound('Domain');
  return domain;
}

/** The domain, if `trackingId` names its tracking domain; else 404. */
async function findTrackingOrThrow(ctx: Context, project: string, domainId: string, trackingId: string): Promise<store.DomainRow> {
  const domain = await findDomainOrThrow(ctx, project, domainId);
  if (domain.tracking_id === null || domain.tracking_id !== trackingId.toLowerCase()) throw notFound('Tracking domain');
  return domain;
}

/** POST /domains/:id/tracking: the domain's tracking subdomain, its CNAME looked up now if the domain is being checked. */
export async function createTrackingDomain(ctx: Context, project: string, domainId: string, input: { subdomain?: string }) {
  if (input.subdomain === undefined) throw missingField('subdomain');
  const domain = await findDomainOrThrow(ctx, project, domainId);
  await changeDomain(ctx, project, domain.id, { tracking_subdomain: subdomain(input.subdomain, 'subdomain') }, (before) => {
    if (before.tracking_id === null) return;
    const name = `${before.tracking_subdomain}.${before.name}`;
    const change = `PATCH /domains/${before.id}/tracking/${before.tracking_id}`;
    throw new AppError('forbidden', `The ${before.name} domain has a tracking domain already (${name}): change it with ${change}, or delete it first.`);
  });
  return toTrackingDomain(ctx, await findDomainOrThrow(ctx, project, domain.id));
}

/** GET /domains/:id/tracking: its one tracking domain, or none. */
export async function listTrackingDomains(ctx: Context, project: string, domainId: string) {
  const domain = await findDomainOrThrow(ctx, project, domainId);
  return { has_more: false, data: domain.tracking_id === null ? [] : [toTrackingDomain(ctx, domain)] };
}

export async function getTrackingDomain(ctx: Context, project: string, domainId: string, trackingId: string) {
  return toTrackingDomain(ctx, await findTrackingOrThrow(ctx, project, domainId, trackingId));
}

/**
 * PATCH /domains/:id/tracking/:tracking_id: another subdomain, the same id. Its CNAME is looked up
 * anew; links already sent keep the old name, which works as long as its CNAME stays.
 */
export async function updateTrackingDomain(ctx: Context, project: string, domainId: string, trackingId: string, input: { subdomain?: string }) {
  const domain = await findTrackingOrThrow(ctx, project, domainId, trackingId);
  if (input.subdomain !== undefined) await changeDomain(ctx, project, domain.id, { tracking_subdomain: subdomain(input.subdomain, 'subdomain') });
  return toTrackingDomain(ctx, await findTrackingOrThrow(ctx, project, domainId, trackingId));
}

/** DELETE /domains/:id/tracking/:tracking_id: new mail is tracked at MAILROOM_PUBLIC_URL again. */
export async function deleteTrackingDomain(ctx: Context, project: string, domainId: string, trackingId: string) {
  const domain = await findTrackingOrThrow(ctx, project, domainId, trackingId);
  await changeDomain(ctx, project, domain.id, { tracking_subdomain: null, tracking_id: null, tracking_created_at: null });
  return { object: 'tracking_domain' as const, id: domain.tracking_id!, deleted: true };
}

/** POST /domains/:id/tracking/:tracking_id/verify: the domain's records, this CNAME among them, are looked up now. */
export async function verifyTrackingDomain(ctx: Context, project: string, domainId: string, trackingId: string) {
  const domain = await findTrackingOrThrow(ctx, project, domainId, trackingId);
  await verifyDomain(ctx, project, domain.id);
  return { object: 'tracking_domain' as const, id: domain.tracking_id! };
}
