import { batchedRead } from './batched-reads.ts';
import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { SuppressionOrigin, SuppressionTable } from './schema.ts';

export type SuppressionRow = SuppressionTable;

/** Inserts an entry unless its email is on its project's list already; false when it was. */
export async function insertSuppression(tx: Tx, row: SuppressionRow): Promise<boolean> {
  const result = await tx
    .insertInto('suppressions')
    .values(row)
    .onConflict((oc) => oc.columns(['project_id', 'email']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findSuppressionById(db: Db | Tx, id: string): Promise<SuppressionRow | undefined> {
  return db.selectFrom('suppressions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The entry of this (lowercased) email, if any. */
export async function findSuppressionByEmail(db: Db | Tx, email: string): Promise<SuppressionRow | undefined> {
  return db.selectFrom('suppressions').selectAll().where('email', '=', email).executeTakeFirst();
}

/** Which of these (lowercased) emails are on the list, with the origin of each entry. */
export async function findSuppressedEmails(db: Db | Tx, emails: string[]): Promise<Pick<SuppressionRow, 'email' | 'origin'>[]> {
  return [...(await suppressionsOf(db, emails)).values()];
}

const suppressionsOf = batchedRead(async (db, emails: string[]) => {
  const rows = await db.selectFrom('suppressions').select(['email', 'origin']).where('email', 'in', emails).execute();
  return new Map(rows.map((row) => [row.email, row]));
});

/** Entries newest first, of one origin when given. */
export async function listSuppressions(db: Db, origin: SuppressionOrigin | undefined, page: PageRequest) {
  const query = db.selectFrom('suppressions').selectAll();
  return selectPage(origin === undefined ? query : query.where('origin', '=', origin), 'id', page);
}

/** Deletes an entry; false when it was gone already (another request took it). */
export async function deleteSuppression(tx: Tx, id: string): Promise<boolean> {
  const result = await tx.deleteFrom('suppressions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
