import { isPostgres, type Db, type Tx } from './db.ts';

/** One check of a domain's deliverability, as the API answers it. */
export interface DeliverabilityCheck {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  fix: string | null;
  /** The spf check's: the DNS lookups its record needs. */
  spf_lookups?: number;
}

/** A domain's last deliverability check, its checks parsed. */
export interface DeliverabilityRow {
  domain_id: string;
  status: DeliverabilityCheck['status'];
  checks: DeliverabilityCheck[];
  checked_at: string;
}

/** A domain's last check; `lock`: held until the transaction ends (PostgreSQL; SQLite's writes take turns). */
export async function findDeliverability(db: Db | Tx, domainId: string, lock = false): Promise<DeliverabilityRow | undefined> {
  const query = db.selectFrom('domain_deliverability').selectAll().where('domain_id', '=', domainId);
  const row = await (lock && isPostgres(db) ? query.forUpdate() : query).executeTakeFirst();
  return row && { ...row, status: row.status as DeliverabilityRow['status'], checks: JSON.parse(row.checks) as DeliverabilityCheck[] };
}

/** Keeps a domain's latest check in place of the one before. */
export async function saveDeliverability(tx: Tx, row: DeliverabilityRow): Promise<void> {
  const values = { ...row, checks: JSON.stringify(row.checks) };
  await tx
    .insertInto('domain_deliverability')
    .values(values)
    .onConflict((oc) => oc.column('domain_id').doUpdateSet({ status: values.status, checks: values.checks, checked_at: values.checked_at }))
    .execute();
}

/** Up to `limit` domains after `after` (by id) never checked, or last checked before `before`. */
export async function findDomainsDue(db: Db, by: { before: string; after: string; limit: number }): Promise<string[]> {
  const rows = await db
    .selectFrom('domains')
    .leftJoin('domain_deliverability', 'domain_deliverability.domain_id', 'domains.id')
    .select('domains.id')
    .where('domains.id', '>', by.after)
    .where((eb) => eb.or([eb('domain_deliverability.checked_at', 'is', null), eb('domain_deliverability.checked_at', '<', by.before)]))
    .orderBy('domains.id')
    .limit(by.limit)
    .execute();
  return rows.map((row) => row.id);
}
