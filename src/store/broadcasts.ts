import type { Expression } from 'kysely';
import type { PropertyValue } from './contact-properties.ts';
import type { Db, Tx } from './db.ts';
import { json, parsed } from './json.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { BroadcastStatus, BroadcastTable } from './schema.ts';

type JsonColumns = 'reply_to' | 'property_fallbacks';
const JSON_COLUMNS = ['reply_to', 'property_fallbacks'] as const;

/** A broadcast as the code uses it: its JSON columns parsed. The table keeps them as text; this module alone converts. */
export interface BroadcastRow extends Omit<BroadcastTable, JsonColumns> {
  reply_to: string[] | null;
  /** The fallbacks of the contact properties the content uses, by key: fixed when the fan-out starts. */
  property_fallbacks: Record<string, PropertyValue> | null;
}

/** Whichever JSON columns `row` has (an update may change some only), as the table keeps them. */
function toTable<T extends Partial<BroadcastRow>>(row: T) {
  const out: Record<string, unknown> = { ...row };
  for (const column of JSON_COLUMNS) if (row[column] !== undefined) out[column] = json(row[column]);
  return out as Omit<T, JsonColumns> & Pick<BroadcastTable, Extract<keyof T, JsonColumns>>;
}

function fromTable(row: BroadcastTable): BroadcastRow {
  return { ...row, reply_to: parsed(row.reply_to), property_fallbacks: parsed(row.property_fallbacks) };
}

export async function insertBroadcast(tx: Db | Tx, row: BroadcastRow): Promise<void> {
  await tx.insertInto('broadcasts').values(toTable(row)).execute();
}

/** The project's broadcast of that id; another project's is none. */
export async function findBroadcast(db: Db | Tx, project: string, id: string): Promise<BroadcastRow | undefined> {
  const row = await db.selectFrom('broadcasts').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return row && fromTable(row);
}

/** The broadcast of that id in any project: for its fan-out job, which reads its project from the row. */
export async function findBroadcastById(db: Db | Tx, id: string): Promise<BroadcastRow | undefined> {
  const row = await db.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && fromTable(row);
}

/** The names of some broadcasts, by id. */
export async function findBroadcastNames(db: Db, ids: string[]): Promise<{ id: string; name: string | null }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('broadcasts').select(['id', 'name']).where('id', 'in', ids).execute();
}

/** A page of the project's broadcasts, without their content. */
export async function listBroadcasts(db: Db, project: string, page: PageRequest) {
  const columns = ['id', 'name', 'segment_id', 'topic_id', 'status', 'created_at', 'scheduled_at', 'sent_at'] as const;
  return selectPage(db.selectFrom('broadcasts').select(columns).where('project_id', '=', project), 'id', page);
}

/**
 * Changes a broadcast only while its status is one of `from`, in one statement, so that a change and a
 * concurrent state transition never both win; false when the broadcast is missing or in another status.
 */
export async function updateBroadcastIn(
  tx: Db | Tx,
  project: string,
  id: string,
  from: BroadcastStatus[],
  changes: Partial<Omit<BroadcastRow, 'id' | 'project_id' | 'created_at'>>,
): Promise<boolean> {
  const result = await tx
    .updateTable('broadcasts')
    .set(toTable(changes))
    .where('id', '=', id)
    .where('project_id', '=', project)
    .where('status', 'in', from)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes the project's broadcast while its status is one of `from`; false otherwise. */
export async function deleteBroadcastIn(tx: Db | Tx, project: string, id: string, from: BroadcastStatus[]): Promise<boolean> {
  const result = await tx.deleteFrom('broadcasts').where('id', '=', id).where('project_id', '=', project).where('status', 'in', from).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Fixes who a broadcast goes to, in one INSERT ... SELECT of the recipients the policy allows (see
 * domain/recipients/policy.ts): contacts who join the segment later are not in it.
 */
export async function snapshotRecipients(tx: Tx, eligible: Expression<{ contact_id: string; broadcast_id: string }>): Promise<void> {
  await tx.insertInto('broadcast_recipients').columns(['contact_id', 'broadcast_id']).expression(eligible).execute();
}

/**
 * The next `limit` recipients after `cursor`, in contact-id order, with what their emails need. A
 * contact deleted since the snapshot comes back with a null email, so that the walk still moves past it.
 */
export async function readRecipients(db: Db, broadcastId: string, cursor: string | null, limit: number) {
  let query = db
    .selectFrom('broadcast_recipients as r')
    .leftJoin('contacts as c', 'c.id', 'r.contact_id')
    .select(['r.contact_id', 'c.email', 'c.first_name', 'c.last_name'])
    .where('r.broadcast_id', '=', broadcastId);
  if (cursor !== null) query = query.where('r.contact_id', '>', cursor);
  return query.orderBy('r.contact_id').limit(limit).execute();
}

/** These contacts' values of the project's properties named by `keys`. */
export async function findPropertyValuesOf(db: Db, project: string, contactIds: string[], keys: string[]) {
  if (contactIds.length === 0 || keys.length === 0) return [];
  const rows = await db
    .selectFrom('contact_property_values as v')
    .innerJoin('contact_properties as p', 'p.id', 'v.property_id')
    .select(['v.contact_id', 'p.key', 'v.value'])
    .where('p.project_id', '=', project)
    .where('p.key', 'in', keys)
    .where('v.contact_id', 'in', contactIds)
    .execute();
  return rows.map(({ contact_id, key, value }) => ({ contact_id, key, value: JSON.parse(value) as PropertyValue }));
}

/** The snapshot is only the fan-out's work list: once every email is written it goes. */
export async function deleteRecipients(tx: Tx, broadcastId: string): Promise<void> {
  await tx.deleteFrom('broadcast_recipients').where('broadcast_id', '=', broadcastId).execute();
}

/** A broadcast's emails still waiting to be sent (`queued`): while its domain is paused, those the guards hold. */
export async function countQueuedEmails(db: Db, broadcastId: string): Promise<number> {
  const row = await db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('broadcast_id', '=', broadcastId)
    .where('last_event', '=', 'queued')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
