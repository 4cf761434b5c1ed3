import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { AutomationTable, AutomationVersionTable } from './schema.ts';

export type AutomationRow = AutomationTable;
export type AutomationVersionRow = AutomationVersionTable;

export async function insertAutomation(tx: Tx, automation: AutomationRow, version: AutomationVersionRow): Promise<void> {
  await tx.insertInto('automations').values(automation).execute();
  await tx.insertInto('automation_versions').values(version).execute();
}

export async function findAutomation(db: Db | Tx, project: string, id: string): Promise<AutomationRow | undefined> {
  return db.selectFrom('automations').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

export async function findVersion(db: Db | Tx, id: string): Promise<AutomationVersionRow | undefined> {
  return db.selectFrom('automation_versions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The project's enabled automations an event of this name starts, with their current graphs. */
export async function findTriggered(db: Db | Tx, project: string, eventName: string) {
  return db
    .selectFrom('automations')
    .innerJoin('automation_versions', 'automation_versions.id', 'automations.version_id')
    .select(['automations.id', 'automations.version_id', 'automation_versions.steps', 'automation_versions.connections'])
    .where('automations.trigger_event', '=', eventName)
    .where('automations.status', '=', 'enabled')
    .where('automations.project_id', '=', project)
    .execute();
}

export async function listAutomations(db: Db, project: string, page: PageRequest, status: string | undefined) {
  let query = db.selectFrom('automations').select(['id', 'name', 'status', 'created_at', 'updated_at']).where('project_id', '=', project);
  if (status !== undefined) query = query.where('status', '=', status);
  return selectPage(query, 'id', page);
}

export async function updateAutomation(db: Db | Tx, project: string, id: string, changes: Partial<Omit<AutomationRow, 'id' | 'project_id' | 'created_at'>>): Promise<void> {
  await db.updateTable('automations').set(changes).where('id', '=', id).where('project_id', '=', project).execute();
}

export async function insertVersion(tx: Tx, version: AutomationVersionRow): Promise<void> {
  await tx.insertInto('automation_versions').values(version).execute();
}

/** Deletes the project's automation with its versions, runs and their steps (cascade). */
export async function deleteAutomation(db: Db | Tx, project: string, id: string): Promise<void> {
  await db.deleteFrom('automations').where('id', '=', id).where('project_id', '=', project).execute();
}
