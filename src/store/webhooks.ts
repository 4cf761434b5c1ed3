import type { Db, Tx } from './db.ts';
import { mapPage, selectPage, type PageRequest } from './paginate.ts';
import type { WebhookTable } from './schema.ts';

/** A webhook endpoint as the code uses it: `events` parsed. The table keeps it as JSON text; this module alone converts. */
export interface WebhookRow extends Omit<WebhookTable, 'events'> {
  events: string[];
}

export type WebhookChanges = Partial<
  Pick<WebhookRow, 'endpoint' | 'events' | 'status' | 'disabled_reason' | 'signing_secret' | 'failing_since'>
>;

// `events` is never null, so it needs none of json.ts's care for SQL NULL.
const fromTable = <T extends Pick<WebhookTable, 'events'>>(row: T) => ({ ...row, events: JSON.parse(row.events) as string[] });

export async function insertWebhook(db: Db | Tx, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values({ ...row, events: JSON.stringify(row.events) }).execute();
}

/** The project's webhook of that id; another project's is none. */
export async function findWebhook(db: Db | Tx, project: string, id: string): Promise<WebhookRow | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && fromTable(row);
}

/** A page of webhooks as the list shows them, with the sealed signing secret. */
export async function listWebhooks(db: Db, project: string, page: PageRequest) {
  const columns = ['id', 'endpoint', 'created_at', 'status', 'events', 'signing_secret'] as const;
  return mapPage(await selectPage(db.selectFrom('webhooks').select(columns).where('project_id', '=', project), 'id', page), fromTable);
}

/** Changes a webhook (at least one column); false when the project has none with this id. */
export async function updateWebhook(db: Db | Tx, project: string, id: string, changes: WebhookChanges): Promise<boolean> {
  const { events, ...rest } = changes;
  const values = events === undefined ? rest : { ...rest, events: JSON.stringify(events) };
  const result = await db.updateTable('webhooks').set(values).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a webhook with its messages and their attempts (cascade); false when the project has none with this id. */
export async function deleteWebhook(db: Db | Tx, project: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The enabled webhooks: few, so events match their subscriptions in code (webhook-cache.ts). */
export async function findEnabledWebhooks(db: Db | Tx): Promise<WebhookRow[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('status', '=', 'enabled').orderBy('id').execute();
  return rows.map(fromTable);
}
