import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { DomainTable } from './schema.ts';

/** The DNS records a domain publishes for Mailroom (domain/domain-records.ts writes them out). */
export const RECORD_KEYS = ['spf_mx', 'spf_txt', 'dkim', 'dmarc', 'receiving_mx', 'mta_sts_host', 'mta_sts', 'tls_rpt', 'tracking'] as const;

export type RecordKey = (typeof RECORD_KEYS)[number];

export type RecordStatuses = Record<RecordKey, string>;

/** A domain as the code uses it, its record statuses parsed: the table keeps them as JSON text; this module alone converts. */
export interface DomainRow extends Omit<DomainTable, 'record_statuses'> {
  record_statuses: RecordStatuses;
}

/** The columns a domain's verification changes. */
export type Verification = Pick<DomainRow, 'status' | 'record_statuses' | 'verify_started_at'>;

/** The settings PATCH /domains/:id may change. */
export type DomainSettings = Partial<
  Pick<
    DomainRow,
    | 'open_tracking'
    | 'click_tracking'
    | 'tracking_subdomain'
    | 'tracking_id'
    | 'tracking_created_at'
    | 'tls'
    | 'sending'
    | 'receiving'
    | 'daily_limit'
    | 'warmup_start'
    | 'warmup_days'
    | 'warmup_started_at'
    | 'sending_paused_reason'
    | 'sending_paused_at'
    | 'sending_resumed_at'
    | 'dmarc_report_address'
  >
>;

/** The statuses as their column keeps them; the verify job quotes this text when it retries. */
export const recordStatusesText = (statuses: RecordStatuses): string => JSON.stringify(statuses);

const UNLISTED = Object.fromEntries(RECORD_KEYS.map((key) => [key, 'not_started'])) as RecordStatuses;

// A record the column lacks is not_started: rows written before the Receiving record, and records a
// check skipped because their capability was disabled.
const fromTable = (row: DomainTable): DomainRow => ({
  ...row,
  record_statuses: { ...UNLISTED, ...(JSON.parse(row.record_statuses) as Partial<RecordStatuses>) },
});

/** Inserts a domain; false when one with that name exists already. */
export async function insertDomain(db: Db | Tx, row: DomainRow): Promise<boolean> {
  const result = await db
    .insertInto('domains')
    .values({ ...row, record_statuses: recordStatusesText(row.record_statuses) })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** The project's domain of that id; another project's is none. */
export async function findDomain(db: Db | Tx, project: string, id: string): Promise<DomainRow | undefined> {
  const row = await db.selectFrom('domains').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && fromTable(row);
}

/** The domain of that id in any project: for work that holds the id from its own row or job (a verification, the daily checks). */
export async function findDomainById(db: Db | Tx, id: string): Promise<DomainRow | undefined> {
  const row = await db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
  return row && fromTable(row);
}

/** The domain registered under `name` (lower-case ASCII), if any. */
export async function findDomainByName(db: Db, name: string): Promise<DomainRow | undefined> {
  const row = await db.selectFrom('domains').selectAll().where('name', '=', name).executeTakeFirst();
  return row && fromTable(row);
}

/** The ids and names of the domains among `ids` or `names` (either list may be empty). */
export async function findDomainNames(db: Db, project: string, by: { ids?: string[]; names?: string[] }): Promise<{ id: string; name: string }[]> {
  const ids = by.ids ?? [];
  const names = by.names ?? [];
  if (ids.length === 0 && names.length === 0) return [];
  return db
    .selectFrom('domains')
    .select(['id', 'name'])
    .where('project_id', '=', project)
    .where((eb) => eb.or([...(ids.length ? [eb('id', 'in', ids)] : []), ...(names.length ? [eb('name', 'in', names)] : [])]))
    .execute();
}

export async function listDomains(db: Db, project: string, page: PageRequest) {
  const columns = ['id', 'name', 'status', 'created_at', 'region', 'open_tracking', 'click_tracking', 'sending', 'receiving'] as const;
  return selectPage(db.selectFrom('domains').select(columns).where('project_id', '=', project), 'id', page);
}

/** Changes a domain's settings; false when the project has no such domain. */
export async function updateDomain(db: Db | Tx, project: string, id: string, settings: DomainSettings): Promise<boolean> {
  if (Object.keys(settings).length === 0) return (await findDomain(db, project, id)) !== undefined;
  const result = await db.updateTable('domains').set(settings).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function setVerification(tx: Db | Tx, id: string, verification: Verification): Promise<void> {
  const changes = { ...verification, record_statuses: recordStatusesText(verification.record_statuses) };
  await tx.updateTable('domains').set(changes).where('id', '=', id).execute();
}

/** False when the project has no such domain. */
export async function deleteDomain(tx: Tx, project: string, id: string): Promise<boolean> {
  const result = await tx.deleteFrom('domains').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Pauses a domain's marketing mail unless it is paused already: true when this call paused it. */
export async function pauseSending(tx: Tx, id: string, reason: string, at: string): Promise<boolean> {
  const result = await tx
    .updateTable('domains')
    .set({ sending_paused_reason: reason, sending_paused_at: at })
    .where('id', '=', id)
    .where('sending_paused_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
