import type { Db } from './db.ts';
import type { AdminKeyTable } from './schema.ts';

export type AdminKeyRow = AdminKeyTable;

/** Stores a new admin key (its token's hash alone). */
export async function insertAdminKey(db: Db, row: AdminKeyRow): Promise<void> {
  await db.insertInto('admin_keys').values(row).execute();
}

/** Whether an admin key's token hashes to `tokenHash`. */
export async function adminKeyExists(db: Db, tokenHash: string): Promise<boolean> {
  return (await db.selectFrom('admin_keys').select('id').where('token_hash', '=', tokenHash).executeTakeFirst()) !== undefined;
}

/** Whether there is any admin key: then the operator's routes answer to an admin key alone. */
export async function anyAdminKey(db: Db): Promise<boolean> {
  return (await db.selectFrom('admin_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** Every admin key, newest first, without its token hash (an install has a handful). */
export async function listAdminKeys(db: Db) {
  return db.selectFrom('admin_keys').select(['id', 'name', 'created_at']).orderBy('id', 'desc').execute();
}

/** Deletes an admin key (its dashboard sessions end with it: findLiveAdminSession); false when there is no such key. */
export async function deleteAdminKey(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('admin_keys').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
