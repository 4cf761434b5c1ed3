import type { Db, Tx } from './db.ts';
import type { IdempotencyKeyTable } from './schema.ts';

/** A kept answer, parsed: the table keeps it as JSON text; this module alone converts. */
export interface IdempotencyKeyRow extends Omit<IdempotencyKeyTable, 'response'> {
  /** The body the first request was answered with. */
  response: unknown;
}

/** The live record of an API key's idempotency key on an endpoint; an expired one counts as absent. */
export async function findIdempotencyKey(
  db: Db,
  scope: Pick<IdempotencyKeyRow, 'api_key_id' | 'endpoint' | 'key'>,
  now: number,
): Promise<IdempotencyKeyRow | undefined> {
  const { api_key_id: apiKeyId, endpoint, key } = scope;
  const row = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('endpoint', '=', endpoint)
    .where('key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row && { ...row, response: JSON.parse(row.response) };
}

/**
 * Records a key in the caller's transaction (the one that stores the emails). An expired record of the
 * same key is replaced; a live one makes the insert fail, and with it the transaction.
 */
export async function insertIdempotencyKey(tx: Tx, row: IdempotencyKeyRow, now: number): Promise<void> {
  await tx
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', row.api_key_id)
    .where('endpoint', '=', row.endpoint)
    .where('key', '=', row.key)
    .where('expires_at', '<=', now)
    .execute();
  await tx.insertInto('idempotency_keys').values({ ...row, response: JSON.stringify(row.response) }).execute();
}

/** Deletes up to `limit` expired keys, soonest expired first; returns how many. */
export async function purgeIdempotencyKeys(db: Db | Tx, now: number, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('api_key_id', 'endpoint', 'key'),
        'in',
        selectFrom('idempotency_keys').select(['api_key_id', 'endpoint', 'key']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).$asTuple('api_key_id', 'endpoint', 'key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
