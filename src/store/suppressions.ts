import { batchedRead } from './batched-reads.ts';
import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { SuppressionOrigin, SuppressionTable } from './schema.ts';

export type SuppressionRow = SuppressionTable;

/** An entry as the API shows it: its project is the caller's, not shown. */
const SHOWN_COLUMNS = ['id', 'email', 'origin', 'source_id', 'created_at'] as const;

/** Inserts an entry unless its email is on its project's list already; false when it was. */
export async function insertSuppression(tx: Tx, row: SuppressionRow): Promise<boolean> {
  const result = await tx
    .insertInto('suppressions')
    .values(row)
    .onConflict((oc) => oc.columns(['project_id', 'email']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The project's entry of that id; another project's is none. */
export async function findSuppressionById(db: Db | Tx, project: string, id: string): Promise<SuppressionRow | undefined> {
  return db.selectFrom('suppressions').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** The project's entry of this (lowercased) email, if any. */
export async function findSuppressionByEmail(db: Db | Tx, project: string, email: string): Promise<SuppressionRow | undefined> {
  return db.selectFrom('suppressions').selectAll().where('email', '=', email).where('project_id', '=', project).executeTakeFirst();
}

/** Which of these (lowercased) emails are on the project's list, with the origin of each entry. */
export async function findSuppressedEmails(db: Db | Tx, project: string, emails: string[]): Promise<Pick<SuppressionRow, 'email' | 'origin'>[]> {
  return [...(await suppressionsOf(db, emails.map((email) => `${project} ${email}`))).values()];
}

// Keyed by project and email (`<project id> <email>`: an id has no space), so that the deliveries of
// several projects batch together; one statement per project of the batch.
const suppressionsOf = batchedRead(async (db, keys: string[]) => {
  const byProject = new Map<string, string[]>();
  for (const key of keys) {
    const space = key.indexOf(' ');
    const project = key.slice(0, space);
    const emails = byProject.get(project) ?? [];
    emails.push(key.slice(space + 1));
    byProject.set(project, emails);
  }
  const found = new Map<string, Pick<SuppressionRow, 'email' | 'origin'>>();
  for (const [project, emails] of byProject) {
    const rows = await db.selectFrom('suppressions').select(['email', 'origin']).where('project_id', '=', project).where('email', 'in', emails).execute();
    for (const row of rows) found.set(`${project} ${row.email}`, row);
  }
  return found;
});

/** The project's entries newest first, of one origin when given. */
export async function listSuppressions(db: Db, project: string, origin: SuppressionOrigin | undefined, page: PageRequest) {
  const query = db.selectFrom('suppressions').select(SHOWN_COLUMNS).where('project_id', '=', project);
  return selectPage(origin === undefined ? query : query.where('origin', '=', origin), 'id', page);
}

/** Deletes the project's entry; false when it was gone already (another request took it). */
export async function deleteSuppression(tx: Tx, project: string, id: string): Promise<boolean> {
  const result = await tx.deleteFrom('suppressions').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
