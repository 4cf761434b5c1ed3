import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ContactImportTable, ContactTopicTable } from './schema.ts';

/** Everything the worker needs, stored with the import: column indexes, segments and topics to apply. */
export interface ImportPlan {
  on_conflict: 'upsert' | 'skip';
  columns: { email: number; first_name?: number; last_name?: number; unsubscribed?: number };
  properties: { id: string; type: 'string' | 'number'; column: number }[];
  segments: string[];
  topics: Omit<ContactTopicTable, 'contact_id'>[];
}

/** An import as the code uses it, its plan parsed: the table keeps it as JSON text; this module alone converts. */
export interface ImportRow extends Omit<ContactImportTable, 'plan'> {
  plan: ImportPlan;
}

export type ImportCounts = Pick<ImportRow, 'processed' | 'created' | 'updated' | 'skipped' | 'failed'>;

// Lists show imports without their plans.
const LIST_COLUMNS = ['id', 'status', 'processed', 'created', 'updated', 'skipped', 'failed', 'error', 'created_at', 'completed_at'] as const;

/** Stores an import with its CSV, in pieces, in the caller's transaction. */
export async function insertImport(tx: Tx, row: ImportRow, chunks: Buffer[]): Promise<void> {
  await tx.insertInto('contact_imports').values({ ...row, plan: JSON.stringify(row.plan) }).execute();
  // A piece is a megabyte: one row per statement.
  for (const [position, content] of chunks.entries()) {
    await tx.insertInto('contact_import_chunks').values({ import_id: row.id, position, content }).execute();
  }
}

/** The project's import of that id; another project's is none. */
export async function findImport(db: Db, project: string, id: string): Promise<ImportRow | undefined> {
  const row = await db.selectFrom('contact_imports').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && { ...row, plan: JSON.parse(row.plan) as ImportPlan };
}

/** The import of that id in any project: for its job, which reads its project from the row. */
export async function findImportById(db: Db, id: string): Promise<ImportRow | undefined> {
  const row = await db.selectFrom('contact_imports').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { ...row, plan: JSON.parse(row.plan) as ImportPlan };
}

/** A page of the project's imports, without their plans. */
export async function listImports(db: Db, project: string, status: ImportRow['status'] | undefined, page: PageRequest) {
  let query = db.selectFrom('contact_imports').select(LIST_COLUMNS).where('project_id', '=', project);
  if (status !== undefined) query = query.where('status', '=', status);
  return selectPage(query, 'id', page);
}

/** One piece of an import's CSV; undefined past the last. */
export async function findImportChunk(db: Db, id: string, position: number): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('contact_import_chunks')
    .select('content')
    .where('import_id', '=', id)
    .where('position', '=', position)
    .executeTakeFirst();
  return row?.content;
}

export async function markImportStarted(db: Db, id: string): Promise<void> {
  await db.updateTable('contact_imports').set({ status: 'in_progress' }).where('id', '=', id).where('status', '=', 'queued').execute();
}

/** Adds a chunk's counts; call it in the transaction that writes the chunk, so progress and rows agree. */
export async function addImportProgress(tx: Tx, id: string, counts: ImportCounts): Promise<void> {
  await tx
    .updateTable('contact_imports')
    .set((eb) => ({
      processed: eb('processed', '+', counts.processed),
      created: eb('created', '+', counts.created),
      updated: eb('updated', '+', counts.updated),
      skipped: eb('skipped', '+', counts.skipped),
      failed: eb('failed', '+', counts.failed),
    }))
    .where('id', '=', id)
    .execute();
}

/** Ends an import and drops its CSV. */
export async function finishImport(
  tx: Tx,
  id: string,
  outcome: { status: 'completed' | 'failed'; error: string | null; completed_at: string },
): Promise<void> {
  await tx.updateTable('contact_imports').set(outcome).where('id', '=', id).execute();
  await tx.deleteFrom('contact_import_chunks').where('import_id', '=', id).execute();
}
