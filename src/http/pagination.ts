import { Type } from 'typebox';
import { isUuid } from '../ids.ts';
import type { PageRequest } from '../store/paginate.ts';
import { AppError } from './errors.ts';
import { MAX, Str } from './schemas.ts';

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
 * omitted; newer ones always paginate, 20 by default.
 */
export function parsePage(query: PageQueryInput, options: { everything: boolean }): PageRequest {
  let limit: number | undefined = options.everything ? undefined : 20;
  if (query.limit !== undefined) {
    limit = /^\d+$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) throw new AppError('validation_error', LIMIT_MESSAGE);
  }
  if (query.after !== undefined && query.before !== undefined) {
    throw new AppError('validation_error', 'The `after` and `before` parameters cannot be used together.');
  }
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
