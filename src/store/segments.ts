import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { SegmentContactTable, SegmentTable } from './schema.ts';

export type SegmentRow = SegmentTable;

export async function insertSegment(db: Db, row: SegmentRow): Promise<void> {
  await db.insertInto('segments').values(row).execute();
}

export async function findSegment(db: Db, id: string): Promise<SegmentRow | undefined> {
  return db.selectFrom('segments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Which of these ids name a segment. */
export async function findSegmentIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('segments').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

export async function listSegments(db: Db, page: PageRequest) {
  return selectPage(db.selectFrom('segments').selectAll(), 'id', page);
}

/** Renames a segment; false when there is no such segment. */
export async function renameSegment(db: Db, id: string, name: string): Promise<boolean> {
  const result = await db.updateTable('segments').set({ name }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a segment and its memberships (cascade); the contacts stay. */
export async function deleteSegment(db: Db, id: string): Promise<void> {
  await db.deleteFrom('segments').where('id', '=', id).execute();
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

