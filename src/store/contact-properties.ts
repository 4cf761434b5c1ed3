import type { Db } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ContactPropertyTable } from './schema.ts';

export type ContactPropertyRow = ContactPropertyTable;

/** Inserts a property definition unless its key is taken; false when it was. */
export async function insertProperty(db: Db, row: ContactPropertyRow): Promise<boolean> {
  const result = await db
    .insertInto('contact_properties')
    .values(row)
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findProperty(db: Db, id: string): Promise<ContactPropertyRow | undefined> {
  return db.selectFrom('contact_properties').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findPropertiesByKeys(db: Db, keys: string[]): Promise<ContactPropertyRow[]> {
  if (keys.length === 0) return [];
  return db.selectFrom('contact_properties').selectAll().where('key', 'in', keys).execute();
}

export async function listProperties(db: Db, page: PageRequest) {
  return selectPage(db.selectFrom('contact_properties').selectAll(), 'id', page);
}

export async function setFallbackValue(db: Db, id: string, fallbackValue: string | null): Promise<void> {
  await db.updateTable('contact_properties').set({ fallback_value: fallbackValue }).where('id', '=', id).execute();
}

/** Deletes a property and every contact's value for it (cascade). */
export async function deleteProperty(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('contact_properties').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
