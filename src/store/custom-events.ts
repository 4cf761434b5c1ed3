import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { CustomEventTable } from './schema.ts';

export type CustomEventRow = CustomEventTable;

export async function insertCustomEvent(db: Db | Tx, row: CustomEventRow): Promise<void> {
  await db.insertInto('custom_events').values(row).execute();
}

/** The project's custom event with this id, or with this name. */
export async function findCustomEvent(db: Db | Tx, project: string, by: { id: string } | { name: string }): Promise<CustomEventRow | undefined> {
  const query = db.selectFrom('custom_events').selectAll().where('project_id', '=', project);
  return ('id' in by ? query.where('id', '=', by.id) : query.where('name', '=', by.name)).executeTakeFirst();
}

export async function listCustomEvents(db: Db, project: string, page: PageRequest) {
  return selectPage(db.selectFrom('custom_events').selectAll().where('project_id', '=', project), 'id', page);
}

export async function updateCustomEvent(db: Db | Tx, project: string, id: string, changes: Pick<CustomEventRow, 'schema' | 'updated_at'>): Promise<void> {
  await db.updateTable('custom_events').set(changes).where('id', '=', id).where('project_id', '=', project).execute();
}

export async function deleteCustomEvent(db: Db | Tx, project: string, id: string): Promise<void> {
  await db.deleteFrom('custom_events').where('id', '=', id).where('project_id', '=', project).execute();
}
