import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { findIdempotencyKey, type IdempotencyKeyRow } from '../../store/idempotency-keys.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** A request that carries an Idempotency-Key: who sent it, the key, where, and a hash of what was sent. */
export interface IdempotentRequest {
  /** The API key of the request: each API key has its own idempotency keys. */
  apiKeyId: string;
  endpoint: string;
  key: string;
  requestHash: string;
}

/**
 * Keys whose first request is still being answered in this process. Expired keys count as absent when
 * read (store/idempotency-keys.ts), in every process; the retention job deletes them.
 */
export interface IdempotencyState {
  readonly inFlight: Set<string>;
}

export function createIdempotencyState(): IdempotencyState {
  return { inFlight: new Set() };
}

/** Resend's answer to a key of the wrong length. */
export function invalidIdempotencyKey(): AppError {
  return new AppError('invalid_idempotency_key', 'Idempotency keys, if present, must have between 1 and 256 characters.');
}

/** An Idempotency-Key as a request gives it (an HTTP header, or a message's header): 1 to 256 characters. */
export function checkIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string' || key.length < 1 || key.length > 256) throw invalidIdempotencyKey();
  return key;
}

function replay<R>(request: IdempotentRequest, row: IdempotencyKeyRow): R {
  if (row.request_hash !== request.requestHash) {
    throw new AppError(
      'invalid_idempotent_request',
      'Same idempotency key used with a different request payload. Use a new key for a different request.',
    );
  }
  return row.response as R;
}

/**
 * Runs `handle` at most once per API key, endpoint and idempotency key within 24 hours. The same key with the same payload
 * answers the first response again; with another payload, 409 invalid_idempotent_request; while the
 * first is still running, 409 concurrent_idempotent_requests. `handle` must store the record that
 * `record(response)` builds in the transaction that stores its emails, so that neither can exist
 * without the other. Failed requests record nothing: the key stays free for a corrected retry.
 */
export async function runIdempotent<R>(
  ctx: Context,
  request: IdempotentRequest | undefined,
  handle: (record: ((response: R) => IdempotencyKeyRow) | undefined) => Promise<R>,
): Promise<R> {
  if (!request) return handle(undefined);
  const scope = `${request.apiKeyId}\n${request.endpoint}\n${request.key}`;
  const stored = { api_key_id: request.apiKeyId, endpoint: request.endpoint, key: request.key };
  if (ctx.idempotency.inFlight.has(scope)) {
    throw new AppError('concurrent_idempotent_requests', 'Same idempotency key used while a previous request is still in progress.');
  }
  ctx.idempotency.inFlight.add(scope);
  try {
    const existing = await findIdempotencyKey(ctx.db, stored, ctx.clock.now());
    if (existing) return replay<R>(request, existing);
    const record = (response: R): IdempotencyKeyRow => ({
      ...stored,
      request_hash: request.requestHash,
      response,
      expires_at: ctx.clock.now() + IDEMPOTENCY_TTL_MS,
    });
    try {
      return await handle(record);
    } catch (error) {
      // Another process committed the same key first: its answer stands, and nothing of ours was stored.
      if (!isUniqueViolation(error)) throw error;
      const winner = await findIdempotencyKey(ctx.db, stored, ctx.clock.now());
      if (!winner) throw error;
      return replay<R>(request, winner);
    }
  } finally {
    ctx.idempotency.inFlight.delete(scope);
  }
}
