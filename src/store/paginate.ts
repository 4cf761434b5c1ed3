import { sql, type SelectQueryBuilder } from 'kysely';
import { AppError } from '../errors.ts';

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

/** Rows per query when a list without `limit` is read: what one slice of such a list holds in memory. */
export const SLICE_ROWS = 500;

/**
 * Keyset pagination over a time-ordered id column, newest first. `after` walks to older rows,
 * `before` to newer ones; the cursor row itself is excluded. One extra row is read to know whether
 * more lie beyond the page in the direction of travel. Never OFFSET: the last page costs the first's.
 * Without `limit`, every row, in slices (selectEverything).
 */
export async function selectPage<DB, TB extends keyof DB, Row extends { id: string }>(
  query: SelectQueryBuilder<DB, TB, Row>,
  idColumn: string,
  page: PageRequest,
): Promise<Page<Row>> {
  if (page.limit === undefined) return selectEverything(query, idColumn, page);
  const id = sql.ref(idColumn);
  let q = query;
  if (page.after !== undefined) q = q.where(id, '<', page.after).orderBy(id, 'desc');
  else if (page.before !== undefined) q = q.where(id, '>', page.before).orderBy(id, 'asc');
  else q = q.orderBy(id, 'desc');
  const data = await q.limit(page.limit + 1).execute();
  const has_more = data.length > page.limit;
  if (has_more) data.pop();
  if (page.before !== undefined) data.reverse();
  return { has_more, data };
}

/**
 * Every row a list without `limit` names, newest first: the first slice now (so that its errors come
 * before any answer), the others as `rest` is consumed, each continuing below the last id of the one
 * before, so that only the slices in flight are in memory, never the whole list. `before` bounds the
 * walk from below. Rows written during the walk are newer than its cursor and not seen; none is seen twice.
 */
async function selectEverything<DB, TB extends keyof DB, Row extends { id: string }>(
  query: SelectQueryBuilder<DB, TB, Row>,
  idColumn: string,
  page: PageRequest,
): Promise<Page<Row>> {
  const bounded = page.before === undefined ? query : query.where(sql.ref(idColumn), '>', page.before);
  const slice = (after: string | undefined) => selectPage(bounded, idColumn, { limit: SLICE_ROWS, after, before: undefined });
  async function* slicesAfter(cursor: string): AsyncGenerator<Row[]> {
    for (;;) {
      const next = await slice(cursor);
      yield next.data;
      if (!next.has_more) return;
      cursor = next.data.at(-1)!.id;
    }
  }
  const first = await slice(page.after);
  return { has_more: false, data: first.data, ...(first.has_more ? { rest: slicesAfter(first.data.at(-1)!.id) } : {}) };
}

/**
 * A page of rows already in memory, in their order, the cursors being their ids: for short lists read
 * whole (an email's attachments: at most 100), whose ids need not sort. A cursor must name one of the rows.
 */
export function slicePage<Row extends { id: string }>(rows: Row[], page: PageRequest): { has_more: boolean; data: Row[] } {
  let [start, end] = [0, rows.length];
  const cursor = page.after ?? page.before;
  if (cursor !== undefined) {
    const at = rows.findIndex((row) => row.id === cursor);
    const name = page.after !== undefined ? 'after' : 'before';
    if (at === -1) throw new AppError('validation_error', `The \`${name}\` parameter must be the id of an item of this list.`);
    if (page.after !== undefined) start = at + 1;
    else end = at;
  }
  const limit = page.limit ?? rows.length;
  if (page.before !== undefined) {
    const from = Math.max(start, end - limit);
    return { has_more: from > start, data: rows.slice(from, end) };
  }
  return { has_more: start + limit < end, data: rows.slice(start, start + limit) };
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
