import type { Db } from './db.ts';

/** The value stored under `name`, or undefined. */
export async function findSetting(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/**
 * Stores `value` under `name` unless a value is there already, and returns the one kept: processes that
 * start at once each offer theirs, and all end up with the first one committed.
 */
export async function insertSettingIfAbsent(db: Db, name: string, value: string): Promise<string> {
  await db.insertInto('settings').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).execute();
  return (await findSetting(db, name))!;
}
