import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../time/ids.ts';
import { slicesOf, type Page, type PageRequest } from '../store/paginate.ts';
import { AppError } from '../errors.ts';
import { MAX, Str } from './schemas/common.ts';

// The one reading of ?limit&after&before. Query values stay strings in the schema so that every bad
// value gets Resend's own message rather than a coercion error.
export const PageQuery = Type.Object({
  limit: Type.Optional(Str(MAX.short, 'Number of items, 1 to 100 (default 20)')),
  after: Type.Optional(Str(MAX.id, 'Id after which to start (older items)')),
  before: Type.Optional(Str(MAX.id, 'Id before which to start (newer items)')),
});

export interface PageQueryInput {
  limit?: string;
  after?: string;
  before?: string;
}

const LIMIT_MESSAGE =
  'The pagination limit must be a number between 1 and 100. See https://resend.com/docs/pagination for more information.';

/**
 * Validates a page request. Older endpoints (`everything: true`) return every item when `limit` is
 * omitted; newer ones always paginate, 20 by default. Cursors are ids, or with `opaque` strings that the
 * list itself reads (a broadcast's clicked links), passed on as they are.
 */
export function parsePage(query: PageQueryInput, options: { everything: boolean; opaque?: boolean }): PageRequest {
  let limit: number | undefined = options.everything ? undefined : 20;
  if (query.limit !== undefined) {
    limit = /^\d+$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) throw new AppError('validation_error', LIMIT_MESSAGE);
  }
  if (query.after !== undefined && query.before !== undefined) {
    throw new AppError('validation_error', 'The `after` and `before` parameters cannot be used together.');
  }
  if (options.opaque) return { limit, after: query.after, before: query.before };
  for (const name of ['after', 'before'] as const) {
    const cursor = query[name];
    if (cursor !== undefined && !isUuid(cursor)) {
      throw new AppError('validation_error', `The \`${name}\` parameter must be a valid id.`);
    }
  }
  return { limit, after: query.after?.toLowerCase(), before: query.before?.toLowerCase() };
}

/** Resend's list envelope. */
export function listOf<Row>(page: { has_more: boolean; data: Row[] }): { object: 'list'; has_more: boolean; data: Row[] } {
  return { object: 'list', has_more: page.has_more, data: page.data };
}

// The envelope of a list without limit as listOfSchema writes it: `data` comes last, so rows can follow.
const OPEN = '{"object":"list","has_more":false,"data":[';
const CLOSE = ']}';

type Json = { [key: string]: unknown };
type Serialize = (row: Json) => string;

/**
 * Answers an older endpoint's list. A page, or a list that fits in one slice, goes out as `listOf`
 * through the route's schema. A longer list is streamed slice by slice, each row serialized by the item
 * schema of the same route, so the bytes are the same while memory holds one slice and the event loop
 * turns between slices.
 */
export function replyList<Row>(reply: FastifyReply, page: Page<Row>): FastifyReply {
  if (page.rest === undefined) return reply.send(listOf(page));
  const serialize = reply.compileSerializationSchema(itemSchema(reply));
  return reply.type('application/json; charset=utf-8').send(Readable.from(listChunks(reply, page, serialize), { objectMode: false }));
}

/** The schema of one row of the route's 200 answer, a listOfSchema. */
function itemSchema(reply: FastifyReply): Json {
  const response = reply.routeOptions.schema?.response as { 200: { properties: { data: { items: Json } } } };
  return response[200].properties.data.items;
}

async function* listChunks<Row>(reply: FastifyReply, page: Page<Row>, serialize: Serialize): AsyncGenerator<string> {
  yield OPEN;
  let comma = '';
  try {
    for await (const slice of slicesOf(page)) {
      if (slice.length === 0) continue;
      yield comma + slice.map((row) => serialize(row as Json)).join(',');
      comma = ',';
      // better-sqlite3 reads synchronously and a client on a fast link never pushes back: without this
      // turn, the whole list would still be built in one go, however it is sliced.
      await nextTurn();
    }
  } catch (error) {
    // The status and part of the body are out: the response can only be cut short (Fastify destroys the
    // socket when the stream fails), so that the client sees it broken rather than waiting.
    reply.log.error({ err: error }, 'a list failed while it was streamed; the response is cut short');
    throw error;
  }
  yield CLOSE;
}
