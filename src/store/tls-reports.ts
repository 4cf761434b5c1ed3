import { sql, type Insertable } from 'kysely';
import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import type { TlsReportTable, TlsSessionCountTable } from './schema.ts';

export type TlsSessionCount = Insertable<TlsSessionCountTable>;

/** Adds sessions to the day's counts (insert-rows.ts ON_CONFLICT adds them up); each key once in `rows`. */
export const addTlsSessions = (tx: Tx, rows: TlsSessionCount[]): Promise<void> => insertRows(tx, 'tls_session_counts', rows);

/** Days before `before` and their domains with sessions counted and no report made, in order. */
export async function findUnreported(db: Db, before: string, limit: number): Promise<{ day: string; domain: string }[]> {
  return db
    .selectFrom('tls_session_counts as c')
    .leftJoin('tls_reports as r', (join) => join.onRef('r.day', '=', 'c.day').onRef('r.domain', '=', 'c.domain'))
    .select(['c.day', 'c.domain'])
    .distinct()
    .where('c.day', '<', before)
    .where('r.report_id', 'is', null)
    .orderBy('c.day')
    .orderBy('c.domain')
    .limit(limit)
    .execute();
}

/** The counts of a day and domain. */
export async function sessionCounts(db: Db, day: string, domain: string) {
  return db.selectFrom('tls_session_counts').selectAll().where('day', '=', day).where('domain', '=', domain).execute();
}

/** Records that the report of its day and domain was made; false if one was already. */
export async function insertTlsReport(tx: Tx, row: TlsReportTable): Promise<boolean> {
  const result = await tx.insertInto('tls_reports').values(row).onConflict((oc) => oc.columns(['day', 'domain']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Forgets the counts and reports of days before `before`. */
export async function deleteTlsDaysBefore(tx: Tx, before: string): Promise<void> {
  await tx.deleteFrom('tls_session_counts').where('day', '<', before).execute();
  await tx.deleteFrom('tls_reports').where('day', '<', before).execute();
}

/** Sessions by day and result from `fromDay` on, of the `limit` recipient domains with the most (most first, then by name). */
export async function sumTlsSessions(db: Db, fromDay: string, limit: number): Promise<{ domain: string; day: string; result: string; sessions: number }[]> {
  const top = db
    .selectFrom('tls_session_counts')
    .select('domain')
    .where('day', '>=', fromDay)
    .groupBy('domain')
    .orderBy(sql`sum(count)`, 'desc')
    .orderBy('domain')
    .limit(limit);
  const rows = await db
    .selectFrom('tls_session_counts')
    .select((eb) => ['domain', 'day', 'result', eb.fn.sum<number | string>('count').as('sessions')])
    .where('day', '>=', fromDay)
    .where('domain', 'in', top)
    .groupBy(['domain', 'day', 'result'])
    .orderBy('domain')
    .orderBy('day')
    .execute();
  return rows.map((r) => ({ ...r, sessions: Number(r.sessions) }));
}

/** The reports made from `fromDay` on for `domains`. */
export async function findTlsReports(db: Db, fromDay: string, domains: string[]) {
  if (domains.length === 0) return [];
  return db.selectFrom('tls_reports').select(['day', 'domain', 'rua', 'created_at']).where('day', '>=', fromDay).where('domain', 'in', domains).execute();
}
