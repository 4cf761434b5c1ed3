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
  /** Without `limit`: the rows after `data`, read slice by slice as they are consumed; absent when there are none. */
  rest?: AsyncIterable<Row[]>;
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

/** The page with `map` applied to each row, to `rest` too as it is read. */
export function mapPage<Row, Mapped>(page: Page<Row>, map: (row: Row) => Mapped): Page<Mapped> {
  const { rest } = page;
  async function* mapSlices(slices: AsyncIterable<Row[]>): AsyncGenerator<Mapped[]> {
    for await (const slice of slices) yield slice.map(map);
  }
  return { has_more: page.has_more, data: page.data.map(map), ...(rest ? { rest: mapSlices(rest) } : {}) };
}

/** A page's `data`, then the slices of its `rest`. */
export async function* slicesOf<Row>(page: Page<Row>): AsyncGenerator<Row[]> {
  yield page.data;
  if (page.rest) yield* page.rest;
}

/** Every row of a page and its `rest`, for internal lists that are small by nature. */
export async function allRows<Row>(page: Page<Row>): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const slice of slicesOf(page)) rows.push(...slice);
  return rows;
}
