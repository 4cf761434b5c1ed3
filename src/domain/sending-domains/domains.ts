import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { generateDkimKey } from '../../delivery/dkim.ts';
import { AppError, invalidField, missingField, notFound, quoted } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import * as store from '../../store/domains.ts';
import { cancel } from '../../jobs/enqueue.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import { logEvents, type NewEvent } from '../events/event-log.ts';
import { asciiDomain, domainOf, normalizeAddress } from '../recipients/addresses.ts';
import { allRecords, domainRecords, recordsOf } from './domain-records.ts';
import { WARMUP_MAX_DAYS, warmupDay, warmupVolume, type Warmup } from './warmup.ts';
import { restartVerification, scheduleCheck, switchVerification, verifyJobKey } from './domain-verification.ts';

const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];
const SUBDOMAIN = /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

export interface DomainSettingsInput {
  open_tracking?: boolean;
  click_tracking?: boolean;
  tls?: string;
  daily_limit?: number | null;
  /** A warm-up starting today (warmup.ts); null ends it. */
  warmup?: Warmup | null;
  capabilities?: { sending?: string; receiving?: string };
  tracking_subdomain?: string;
  /** Only false: resumes marketing mail the guards paused (domain/deliverability/guards.ts). */
  sending_paused?: boolean;
}

export interface DomainUpdate extends DomainSettingsInput {
  /** Where its DMARC aggregate reports are read (domain/dmarc/); null turns reading off. */
  dmarc_reports?: { address: string } | null;
}

export interface DomainInput extends DomainSettingsInput {
  name?: string;
  region?: string;
  custom_return_path?: string;
}

/** A subdomain as `field` gives it, lower-cased, or 422. */
export function subdomain(value: string, field: string): string {
  const lower = value.toLowerCase();
  if (!SUBDOMAIN.test(lower)) throw invalidField(field, 'expected a subdomain: letters, digits and hyphens, such as "send".');
  return lower;
}

function capability(value: string | undefined, field: string): string | undefined {
  if (value !== undefined && value !== 'enabled' && value !== 'disabled') throw invalidField(field, 'must be "enabled" or "disabled".');
  return value;
}

/** A warm-up as PATCH /domains/:id gives it, checked, starting on the UTC day of `now`; null ends one. */
function warmupOf(warmup: Warmup | null, now: number): store.DomainSettings {
  if (warmup === null) return { warmup_start: null, warmup_days: null, warmup_started_at: null };
  const { start, days } = warmup;
  if (!(Number.isInteger(start) && start >= 1)) throw invalidField('warmup.start', 'must be a whole number of messages for its first day, 1 or more.');
  if (!(Number.isInteger(days) && days >= 1 && days <= WARMUP_MAX_DAYS)) throw invalidField('warmup.days', `must be a whole number of days from 1 to ${WARMUP_MAX_DAYS}.`);
  return { warmup_start: start, warmup_days: days, warmup_started_at: now };
}

/** The settings create and update share, checked and in storage form. */
function settingsOf(input: DomainSettingsInput, now: number): store.DomainSettings {
  const settings: store.DomainSettings = {};
  if (input.open_tracking !== undefined) settings.open_tracking = input.open_tracking ? 1 : 0;
  if (input.click_tracking !== undefined) settings.click_tracking = input.click_tracking ? 1 : 0;
  if (input.tracking_subdomain !== undefined) settings.tracking_subdomain = subdomain(input.tracking_subdomain, 'tracking_subdomain');
  if (input.tls !== undefined) {
    if (input.tls !== 'opportunistic' && input.tls !== 'enforced') throw invalidField('tls', 'must be "opportunistic" or "enforced".');
    settings.tls = input.tls;
  }
  if (input.daily_limit !== undefined) {
    const limit = input.daily_limit;
    if (limit !== null && !(Number.isInteger(limit) && limit >= 1)) throw invalidField('daily_limit', 'must be a whole number of messages a day, 1 or more, or null for no limit.');
    settings.daily_limit = limit;
  }
  if (input.warmup !== undefined) Object.assign(settings, warmupOf(input.warmup, now));
  const sending = capability(input.capabilities?.sending, 'capabilities.sending');
  const receiving = capability(input.capabilities?.receiving, 'capabilities.receiving');
  if (sending) settings.sending = sending;
  if (receiving) settings.receiving = receiving;
  if (input.sending_paused === true) throw invalidField('sending_paused', 'only false is accepted: it resumes marketing mail the guards paused; Mailroom pauses it itself.');
  if (input.sending_paused === false) Object.assign(settings, { sending_paused_reason: null, sending_paused_at: null });
  return settings;
}

/** A domain that neither sends nor receives is refused, as Resend does; one that only receives is Resend's too. */
function checkCapabilities(domain: Pick<store.DomainRow, 'sending' | 'receiving' | 'dmarc_report_address'>): void {
  if (domain.sending === 'disabled' && domain.receiving === 'disabled') {
    throw new AppError('validation_error', 'At least one capability must be enabled: `capabilities.sending` or `capabilities.receiving`.');
  }
  // Reports arrive as mail: a domain that does not receive here cannot read them.
  if (domain.dmarc_report_address && domain.receiving !== 'enabled') {
    throw invalidField('dmarc_reports', 'DMARC reports are read from mail this domain receives: enable `capabilities.receiving` first, or set `dmarc_reports` to null.');
  }
}

export interface SendingPause {
  reason: string;
  since: string;
}

/** The pause of marketing mail a domain row records, as its object and events show it; null while it sends. */
export function pauseOf(row: Pick<store.DomainRow, 'sending_paused_reason' | 'sending_paused_at'>): SendingPause | null {
  return row.sending_paused_at === null ? null : { reason: row.sending_paused_reason ?? '', since: isoTime(row.sending_paused_at) };
}

/** A domain's warm-up as its object shows it, with today's volume (null: no limit any more); null when none. */
export function warmupShown(row: Pick<store.DomainRow, 'warmup_start' | 'warmup_days' | 'warmup_started_at'>, now: number) {
  if (row.warmup_start === null || row.warmup_days === null || row.warmup_started_at === null) return null;
  const warmup = { start: row.warmup_start, days: row.warmup_days };
  const startedAt = Number(row.warmup_started_at);
  return { ...warmup, started_at: isoTime(toTimestamp(startedAt)), today_limit: warmupVolume(warmup, warmupDay(startedAt, now)) };
}

/** Resend's domain object (POST answers it without `object`), plus Mailroom's `custom_return_path`, `tls`, `daily_limit`, `warmup` and `sending_paused`. */
function toDomain(ctx: Context, row: store.DomainRow) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    created_at: row.created_at,
    region: row.region,
    open_tracking: row.open_tracking === 1,
    click_tracking: row.click_tracking === 1,
    ...(row.tracking_subdomain === null ? {} : { tracking_subdomain: row.tracking_subdomain }),
    capabilities: { sending: row.sending, receiving: row.receiving },
    custom_return_path: row.custom_return_path,
    tls: row.tls,
    daily_limit: row.daily_limit,
    warmup: warmupShown(row, ctx.clock.now()),
    sending_paused: pauseOf(row),
    dmarc_reports: row.dmarc_report_address === null ? null : { address: row.dmarc_report_address },
    records: recordsOf(row, ctx.config),
  };
}

/** A domain.* webhook event: the domain as it stands, with its records. */
export function domainEvent(ctx: Context, type: 'domain.created' | 'domain.updated' | 'domain.deleted', row: store.DomainRow): NewEvent {
  const { id, name, status, created_at, region, capabilities, records, sending_paused } = toDomain(ctx, row);
  const data = { id, name, status, created_at: isoTime(created_at), region, capabilities, records };
  // Mailroom's: whether the guards hold its marketing mail, on the changes of a domain.
  return { project: row.project_id, type, data: type === 'domain.updated' ? { ...data, sending_paused } : data };
}

/** The id and time a tracking subdomain set for the first time gets (tracking-domains.ts): none for other changes. */
function trackingIdentity(settings: store.DomainSettings, at: string, before?: Pick<store.DomainRow, 'tracking_id'>): { tracking_id?: string; tracking_created_at?: string } {
  if (settings.tracking_subdomain === undefined || settings.tracking_subdomain === null || (before && before.tracking_id !== null)) return {};
  return { tracking_id: newId(), tracking_created_at: at };
}

const alreadyRegistered = (name: string) => new AppError('forbidden', `The ${name} domain has already been registered.`);

/** POST /domains: checks the input, makes the domain's DKIM key, stores it with its records not_started. */
/** POST /domains in `project`; a name is one project's at most, so another's is refused as registered. */
export async function createDomain(ctx: Context, project: string, input: DomainInput) {
  if (input.name === undefined) throw missingField('name');
  const name = asciiDomain(input.name.trim());
  if (!name) throw invalidField('name', `${quoted(input.name)} is not a domain name such as example.com.`);
  const region = input.region ?? 'us-east-1';
  if (!REGIONS.includes(region)) throw new AppError('invalid_region', `Region must be ${REGIONS.map((r) => `"${r}"`).join(' | ')}`);
  const returnPath = subdomain(input.custom_return_path ?? 'send', 'custom_return_path');
  const settings = settingsOf(input, ctx.clock.now());
  checkCapabilities({ sending: 'enabled', receiving: 'disabled', dmarc_report_address: null, ...settings });
  if (await store.findDomainByName(ctx.db, name)) throw alreadyRegistered(name);

  const id = newId();
  const key = await generateDkimKey(ctx.secret, id);
  const row: store.DomainRow = {
    id,
    project_id: project,
    name,
    status: 'not_started',
    record_statuses: allRecords('not_started'),
    verify_started_at: null,
    region,
    custom_return_path: returnPath,
    open_tracking: 0,
    click_tracking: 0,
    tracking_subdomain: null,
    tracking_id: null,
    tracking_created_at: null,
    tls: 'opportunistic',
    daily_limit: null,
    warmup_start: null,
    warmup_days: null,
    warmup_started_at: null,
    sending: 'enabled',
    receiving: 'disabled',
    ...settings,
    ...trackingIdentity(settings, toTimestamp(ctx.clock.now())),
    dkim_selector: key.selector,
    dkim_public_key: key.publicKey,
    dkim_private_key: key.sealedPrivateKey,
    created_at: toTimestamp(ctx.clock.now()),
    sending_paused_reason: null,
    sending_paused_at: null,
    sending_resumed_at: null,
    dmarc_report_address: null,
  };
  const inserted = await ctx.writer.transaction(async (tx) => {
    if (!(await store.insertDomain(tx, row))) return false;
    await logEvents(ctx, tx, [domainEvent(ctx, 'domain.created', row)], row.created_at);
    return true;
  });
  if (!inserted) throw alreadyRegistered(name);
  ctx.domains.clear();
  return toDomain(ctx, row);
}

async function findOrThrow(ctx: Context, project: string, id: string): Promise<store.DomainRow> {
  const row = await store.findDomain(ctx.db, project, id);
  if (!row) throw notFound('Domain');
  return row;
}

export async function getDomain(ctx: Context, project: string, id: string) {
  return { object: 'domain' as const, ...toDomain(ctx, await findOrThrow(ctx, project, id)) };
}

/** GET /domains: rows without records (an older endpoint: everything unless `limit` is given). */
export async function listDomains(ctx: Context, project: string, page: PageRequest) {
  const result = await store.listDomains(ctx.db, project, page);
  return mapPage(result, ({ sending, receiving, open_tracking, click_tracking, ...row }) => ({
    ...row,
    open_tracking: open_tracking === 1,
    click_tracking: click_tracking === 1,
    capabilities: { sending, receiving },
  }));
}

/**
 * PATCH /domains/:id. Switching a capability changes the records (the Receiving MX comes and goes
 * with receiving) and, on a domain being checked, looks the new ones up now (switchVerification).
 */
export async function updateDomain(ctx: Context, project: string, id: string, input: DomainUpdate): Promise<void> {
  const settings = settingsOf(input, ctx.clock.now());
  if (input.dmarc_reports === undefined) return changeDomain(ctx, project, id, settings);
  if (input.dmarc_reports === null) return changeDomain(ctx, project, id, { ...settings, dmarc_report_address: null });
  const address = normalizeAddress(input.dmarc_reports.address.trim())?.toLowerCase();
  if (!address) throw invalidField('dmarc_reports.address', `${quoted(input.dmarc_reports.address)} is not an email address such as dmarc@example.com.`);
  const host = await store.findDomainByName(ctx.db, domainOf(address));
  await changeDomain(ctx, project, id, { ...settings, dmarc_report_address: address }, (before) => {
    if (domainOf(address) !== before.name && (host?.receiving !== 'enabled' || host.project_id !== project)) {
      throw invalidField('dmarc_reports.address', `${address} must be at ${before.name} or at another of your domains that receives mail here.`);
    }
  });
}

/**
 * Changes a domain's settings, with what that changes of its records and their checks, and its
 * domain.updated event; `check` may refuse the change, seeing the domain in the same transaction.
 */
export async function changeDomain(ctx: Context, project: string, id: string, changes: store.DomainSettings, check?: (before: store.DomainRow) => void): Promise<void> {
  const now = ctx.clock.now();
  await ctx.writer.transaction(async (tx) => {
    const before = await store.findDomain(tx, project, id);
    if (!before) throw notFound('Domain');
    check?.(before);
    const settings = { ...changes, ...trackingIdentity(changes, toTimestamp(now), before) };
    // A resume: the guards count from now on, not the bounces that paused it.
    if (changes.sending_paused_at === null && before.sending_paused_at !== null) settings.sending_resumed_at = now;
    const after = { ...before, ...settings };
    checkCapabilities(after);
    await store.updateDomain(tx, project, id, settings);
    const shown = new Set(domainRecords(before, ctx.config).map((r) => r.key));
    // A new tracking subdomain is a new record to look up, though of the same key.
    if (before.tracking_subdomain !== after.tracking_subdomain) shown.delete('tracking');
    const added = domainRecords(after, ctx.config).filter((r) => !shown.has(r.key)).map((r) => r.key);
    const switched = switchVerification(before, added, before.sending !== after.sending, now);
    if (switched) {
      await store.setVerification(tx, id, switched.verification);
      if (switched.check) await scheduleCheck(ctx, tx, id, now);
    }
    await logEvents(ctx, tx, [domainEvent(ctx, 'domain.updated', { ...after, ...switched?.verification })], toTimestamp(now));
  });
  ctx.domains.clear();
}

/** DELETE /domains/:id: the domain, its key and its pending checks. */
export async function deleteDomain(ctx: Context, project: string, id: string): Promise<void> {
  await ctx.writer.transaction(async (tx) => {
    const row = await store.findDomain(tx, project, id);
    if (!row) throw notFound('Domain');
    await cancel(tx, verifyJobKey(id));
    await store.deleteDomain(tx, project, id);
    await logEvents(ctx, tx, [domainEvent(ctx, 'domain.deleted', row)], toTimestamp(ctx.clock.now()));
  });
  ctx.domains.clear();
}

/** POST /domains/:id/verify: the records are looked up by a job due now; it answers at once. */
export async function verifyDomain(ctx: Context, project: string, id: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.writer.transaction(async (tx) => {
    const row = await store.findDomain(tx, project, id);
    if (!row) throw notFound('Domain');
    await store.setVerification(tx, id, restartVerification(row, now));
    await scheduleCheck(ctx, tx, id, now);
  });
  ctx.domains.clear();
}
