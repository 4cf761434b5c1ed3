import { sql } from 'kysely';
import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { SegmentContactTable, SegmentTable } from './schema.ts';

export type SegmentRow = SegmentTable;

export async function insertSegment(db: Db, row: SegmentRow): Promise<void> {
  await db.insertInto('segments').values(row).execute();
}

/** The project's segment of that id; another project's is none. */
export async function findSegment(db: Db, project: string, id: string): Promise<SegmentRow | undefined> {
  return db.selectFrom('segments').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** Which of these ids name a segment of the project. */
export async function findSegmentIds(db: Db, project: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('segments').select('id').where('id', 'in', ids).where('project_id', '=', project).execute();
  return new Set(rows.map((row) => row.id));
}

export async function listSegments(db: Db, project: string, page: PageRequest) {
  return selectPage(db.selectFrom('segments').selectAll().where('project_id', '=', project), 'id', page);
}

/** Renames a segment; false when the project has no such segment. */
export async function renameSegment(db: Db, project: string, id: string, name: string): Promise<boolean> {
  const result = await db.updateTable('segments').set({ name }).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a segment and its memberships (cascade); the contacts stay. */
export async function deleteSegment(db: Db, project: string, id: string): Promise<void> {
  await db.deleteFrom('segments').where('id', '=', id).where('project_id', '=', project).execute();
}

/** Adds contacts to segments; memberships that exist already are left as they are. */
export async function addMemberships(tx: Tx, rows: SegmentContactTable[]): Promise<void> {
  await insertRows(tx, 'segment_contacts', rows, (query) => query.onConflict((oc) => oc.columns(['segment_id', 'contact_id']).doNothing()));
}

export async function removeMembership(db: Db, segmentId: string, contactId: string): Promise<void> {
  await db.deleteFrom('segment_contacts').where('segment_id', '=', segmentId).where('contact_id', '=', contactId).execute();
}

/** The ids of the segments a contact belongs to. */
export async function segmentIdsOf(db: Db | Tx, contactId: string): Promise<string[]> {
  const rows = await db.selectFrom('segment_contacts').select('segment_id').where('contact_id', '=', contactId).orderBy('segment_id').execute();
  return rows.map((row) => row.segment_id);
}

export async function isMember(db: Db, segmentId: string, contactId: string): Promise<boolean> {
  const row = await db
    .selectFrom('segment_contacts')
    .select('contact_id')
    .where('segment_id', '=', segmentId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The segments a contact belongs to, in segment-id order from the membership index. */
export async function listContactSegments(db: Db, contactId: string, page: PageRequest) {
  const query = db
    .selectFrom('segment_contacts')
    .innerJoin('segments', 'segments.id', 'segment_contacts.segment_id')
    .select(['segments.id', 'segments.name', 'segments.created_at'])
    .where('segment_contacts.contact_id', '=', contactId);
  return selectPage(query, 'segment_contacts.segment_id', page);
}


/** Which contacts segment counts take: of some segments (all when undefined), created in [from, to) (timestamps). */
export interface SegmentCountScope {
  segmentIds?: string[];
  from?: string;
  to?: string;
}

export interface SegmentCounts {
  all_contacts: number;
  subscribers: number;
  unsubscribers: number;
}

// Counts as numbers: PostgreSQL counts in bigint, which pg hands over as a string.
const countsOf = (row: { all_contacts: number | string; unsubscribers: number | string | null }): SegmentCounts => {
  const all = Number(row.all_contacts);
  const unsubscribers = Number(row.unsubscribers ?? 0);
  return { all_contacts: all, subscribers: all - unsubscribers, unsubscribers };
};

/** Each of the project's segments in scope with its contacts counted, newest segment first (or oldest, `ascending`). */
export async function countSegmentContacts(db: Db, project: string, scope: SegmentCountScope, ascending: boolean) {
  let query = db
    .selectFrom('segments')
    .leftJoin('segment_contacts', 'segment_contacts.segment_id', 'segments.id')
    .leftJoin('contacts', (join) => {
      let on = join.onRef('contacts.id', '=', 'segment_contacts.contact_id');
      if (scope.from !== undefined) on = on.on('contacts.created_at', '>=', scope.from);
      if (scope.to !== undefined) on = on.on('contacts.created_at', '<', scope.to);
      return on;
    })
    .select([
      'segments.id',
      'segments.name',
      'segments.created_at',
      sql<number | string>`count(contacts.id)`.as('all_contacts'),
      sql<number | string | null>`sum(case when contacts.unsubscribed = 1 then 1 else 0 end)`.as('unsubscribers'),
    ])
    .where('segments.project_id', '=', project)
    .groupBy(['segments.id', 'segments.name', 'segments.created_at']);
  if (scope.segmentIds) query = query.where('segments.id', 'in', scope.segmentIds);
  const direction = ascending ? 'asc' : 'desc';
  const rows = await query.orderBy('segments.created_at', direction).orderBy('segments.id', direction).execute();
  return rows.map((row) => ({ id: row.id, name: row.name, ...countsOf(row) }));
}

/** The project's contacts in any segment in scope, each counted once. */
export async function countContactsInSegments(db: Db, project: string, scope: SegmentCountScope): Promise<SegmentCounts> {
  let query = db
    .selectFrom('contacts')
    .select([sql<number | string>`count(*)`.as('all_contacts'), sql<number | string | null>`sum(case when contacts.unsubscribed = 1 then 1 else 0 end)`.as('unsubscribers')])
    .where((eb) => {
      let members = eb.selectFrom('segment_contacts').select('segment_contacts.contact_id').whereRef('segment_contacts.contact_id', '=', 'contacts.id');
      if (scope.segmentIds) members = members.where('segment_contacts.segment_id', 'in', scope.segmentIds);
      return eb.exists(members);
    })
    .where('contacts.project_id', '=', project);
  if (scope.from !== undefined) query = query.where('contacts.created_at', '>=', scope.from);
  if (scope.to !== undefined) query = query.where('contacts.created_at', '<', scope.to);
  return countsOf(await query.executeTakeFirstOrThrow());
}
