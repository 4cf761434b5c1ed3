import { sql, type SelectQueryBuilder } from 'kysely';

/** A validated page request; `limit` undefined means "everything" (older endpoints only). */
export interface PageRequest {
  limit: number | undefined;
  after: string | undefined;
  before: string | undefined;
}

export interface Page<Row> {
  has_more: boolean;
  data: Row[];
}

/**
 * Keyset pagination over a time-ordered id column, newest first. `after` walks to older rows,
 * `before` to newer ones; the cursor row itself is excluded. One extra row is read to know whether
 * more lie beyond the page in the direction of travel. Never OFFSET: the last page costs the first's.
 */
export async function selectPage<Row>(
  query: SelectQueryBuilder<any, any, Row>,
  idColumn: string,
  page: PageRequest,
): Promise<Page<Row>> {
  const id = sql.ref(idColumn);
  let q = query;
  if (page.after !== undefined) q = q.where(id, '<', page.after).orderBy(id, 'desc');
  else if (page.before !== undefined) q = q.where(id, '>', page.before).orderBy(id, 'asc');
  else q = q.orderBy(id, 'desc');
  if (page.limit !== undefined) q = q.limit(page.limit + 1);
  const data = await q.execute();
  const has_more = page.limit !== undefined && data.length > page.limit;
  if (has_more) data.pop();
  if (page.before !== undefined) data.reverse();
  return { has_more, data };
}
