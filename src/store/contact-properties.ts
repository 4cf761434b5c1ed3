import type { Db } from './db.ts';
import { json, parsed } from './json.ts';
import { mapPage, selectPage, type PageRequest } from './paginate.ts';
import type { ContactPropertyTable } from './schema.ts';

/** A contact's value of a property, or a property's fallback: a string or a number, as its type says. */
export type PropertyValue = string | number;

/**
 * A property definition as the code uses it, its fallback parsed. The table keeps the fallback as JSON
 * text, so that it keeps its type; this module alone converts.
 */
export interface ContactPropertyRow extends Omit<ContactPropertyTable, 'fallback_value'> {
  fallback_value: PropertyValue | null;
}

const fromTable = (row: ContactPropertyTable): ContactPropertyRow => ({ ...row, fallback_value: parsed(row.fallback_value) });

/** Inserts a property definition unless its project has its key already; false when it had. */
export async function insertProperty(db: Db, row: ContactPropertyRow): Promise<boolean> {
  const result = await db
    .insertInto('contact_properties')
    .values({ ...row, fallback_value: json(row.fallback_value) })
    .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The project's property of that id; another project's is none. */
export async function findProperty(db: Db, project: string, id: string): Promise<ContactPropertyRow | undefined> {
  const row = await db.selectFrom('contact_properties').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && fromTable(row);
}

export async function findPropertiesByKeys(db: Db, project: string, keys: string[]): Promise<ContactPropertyRow[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('contact_properties').selectAll().where('key', 'in', keys).where('project_id', '=', project).execute();
  return rows.map(fromTable);
}

export async function listProperties(db: Db, project: string, page: PageRequest) {
  return mapPage(await selectPage(db.selectFrom('contact_properties').selectAll().where('project_id', '=', project), 'id', page), fromTable);
}

export async function setFallbackValue(db: Db, project: string, id: string, fallbackValue: PropertyValue | null): Promise<void> {
  await db.updateTable('contact_properties').set({ fallback_value: json(fallbackValue) }).where('id', '=', id).where('project_id', '=', project).execute();
}

/** Deletes a property and every contact's value for it (cascade). */
/** False when the project has no such property. */
export async function deleteProperty(db: Db, project: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('contact_properties').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
