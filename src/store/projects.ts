import { sql } from 'kysely';
import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ProjectTable } from './schema.ts';

export type ProjectRow = ProjectTable;

/** The project an install's rows went to when it took projects (migration 35), and its keys' without one. */
export const DEFAULT_PROJECT_ID = '00000000-0000-7000-8000-000000000000';

/**
 * The tables whose rows a project owns (migration 35), in the order its removal deletes them: each
 * row's children go with it (foreign keys cascade), and a domain's DMARC reports with the domain.
 */
const OWNED_TABLES = [
  'api_keys',
  'api_logs',
  'automations',
  'custom_events',
  'webhooks',
  'events',
  'broadcasts',
  'emails',
  'email_metrics',
  'email_metric_deltas',
  'received_emails',
  'templates',
  'contact_imports',
  'contacts',
  'contact_properties',
  'segments',
  'topics',
  'suppressions',
  'dmarc_reports',
  'domains',
  'project_sends',
] as const;

export async function insertProject(tx: Db | Tx, row: ProjectRow): Promise<void> {
  await tx.insertInto('projects').values(row).execute();
}

export async function findProject(db: Db | Tx, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listProjects(db: Db, page: PageRequest) {
  return selectPage(db.selectFrom('projects').selectAll(), 'id', page);
}

export type ProjectChanges = Partial<Omit<ProjectRow, 'id' | 'created_at'>>;

/** False when there is no such project. */
export async function updateProject(db: Db | Tx, id: string, changes: ProjectChanges): Promise<boolean> {
  const result = await db.updateTable('projects').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What keeps a project from being deleted without `force`: its domains and its keys. */
export async function countHoldings(db: Db | Tx, id: string): Promise<{ domains: number; api_keys: number }> {
  const count = async (table: 'domains' | 'api_keys') => {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', id).executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { domains: await count('domains'), api_keys: await count('api_keys') };
}

/** Deletes the project's row and its keys (so they stop working in the same commit); the ids of the keys. */
export async function deleteProjectAndKeys(tx: Tx, id: string): Promise<string[] | undefined> {
  const keys = await tx.deleteFrom('api_keys').where('project_id', '=', id).returning('id').execute();
  const result = await tx.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n ? keys.map((key) => key.id) : undefined;
}

/** The owned tables, each a step of a removed project's deletion. */
export const ownedTables: readonly string[] = OWNED_TABLES;

/** Deletes a removed project's rows of `table` (their children cascade). */
export async function deleteOwnedRows(tx: Tx, table: string, projectId: string): Promise<void> {
  await sql`delete from ${sql.table(table)} where project_id = ${projectId}`.execute(tx);
}
