import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ApiKeyTable } from './schema.ts';

export type ApiKeyRow = ApiKeyTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/**
 * Makes `row` the configured key (MAILROOM_API_KEY): the configured keys with another token are
 * deleted, and `row` is inserted unless its token is a key already. Returns the ids deleted.
 */
export async function replaceConfiguredKey(tx: Tx, row: ApiKeyRow): Promise<string[]> {
  const stale = await tx.deleteFrom('api_keys').where('configured', '=', 1).where('token_hash', '!=', row.token_hash).returning('id').execute();
  await tx.insertInto('api_keys').values(row).onConflict((oc) => oc.column('token_hash').doNothing()).execute();
  return stale.map((key) => key.id);
}

/** The key whose token hashes to `tokenHash`, if it exists. */
export async function findApiKeyByHash(db: Db, tokenHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function countApiKeys(db: Db): Promise<number> {
  const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A project's keys without their token hashes; permission and domain_id are for the dashboard (the API's schema leaves them out, as Resend does). */
export async function listApiKeys(db: Db, project: string, page: PageRequest) {
  const query = db.selectFrom('api_keys').select(['id', 'name', 'permission', 'domain_id', 'created_at', 'last_used_at']).where('project_id', '=', project);
  return selectPage(query, 'id', page);
}

export type ApiKeyChanges = Partial<Pick<ApiKeyRow, 'name' | 'rate_limit'>>;

/** Sets a key's name or rate; false when the project has no such key. */
export async function updateApiKey(db: Db, project: string, id: string, changes: ApiKeyChanges): Promise<boolean> {
  const result = await db.updateTable('api_keys').set(changes).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** False when the project has no such key. */
export async function deleteApiKey(db: Db, project: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('api_keys').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Writes coalesced last-used times, one statement per key. */
export async function touchApiKeys(tx: Tx, lastUsed: Map<string, string>): Promise<void> {
  for (const [id, at] of lastUsed) {
    await tx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
