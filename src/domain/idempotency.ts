import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Context } from '../context.ts';
import { AppError } from '../http/errors.ts';
import { isUniqueViolation, type Db } from '../store/db.ts';
import { findIdempotencyKey, purgeIdempotencyKeys, type IdempotencyKeyRow } from '../store/idempotency-keys.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const PURGE_EVERY_MS = 3600 * 1000;

/** A request that carries an Idempotency-Key: the key, where it was sent, and a hash of what was sent. */
export interface IdempotentRequest {
  endpoint: string;
  key: string;
  requestHash: string;
}

/** Keys whose first request is still being answered in this process, and the purge of expired keys. */
export interface IdempotencyState {
  readonly inFlight: Set<string>;
  close(): void;
}

export function createIdempotencyState(db: Db, clock: Clock, log: Logger): IdempotencyState {
  const timer = setInterval(() => {
    purgeIdempotencyKeys(db, clock.now()).catch((err) => log.warn({ err }, 'could not purge idempotency keys'));
  }, PURGE_EVERY_MS);
  timer.unref();
  return { inFlight: new Set(), close: () => clearInterval(timer) };
}

/** JSON with sorted keys, so that the same payload hashes the same whatever its key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Reads the Idempotency-Key header of a request to `endpoint`; undefined when there is none. */
export function idempotentRequest(endpoint: string, key: string | string[] | undefined, payload: unknown): IdempotentRequest | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length < 1 || key.length > 256) {
    throw new AppError('invalid_idempotency_key', 'Idempotency keys, if present, must have between 1 and 256 characters.');
  }
  const requestHash = createHash('sha256').update(canonicalJson(payload)).digest('hex');
  return { endpoint, key, requestHash };
}

function replay<R>(request: IdempotentRequest, row: IdempotencyKeyRow): R {
  if (row.request_hash !== request.requestHash) {
    throw new AppError(
      'invalid_idempotent_request',
      'Same idempotency key used with a different request payload. Use a new key for a different request.',
    );
  }
  return JSON.parse(row.response) as R;
}

/**
 * Runs `handle` at most once per key and endpoint within 24 hours. The same key with the same payload
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
  const scope = `${request.endpoint}\n${request.key}`;
  if (ctx.idempotency.inFlight.has(scope)) {
    throw new AppError('concurrent_idempotent_requests', 'Same idempotency key used while a previous request is still in progress.');
  }
  ctx.idempotency.inFlight.add(scope);
  try {
    const existing = await findIdempotencyKey(ctx.db, request.endpoint, request.key, ctx.clock.now());
    if (existing) return replay<R>(request, existing);
    const record = (response: R): IdempotencyKeyRow => ({
      endpoint: request.endpoint,
      key: request.key,
      request_hash: request.requestHash,
      response: JSON.stringify(response),
      expires_at: ctx.clock.now() + IDEMPOTENCY_TTL_MS,
    });
    try {
      return await handle(record);
    } catch (error) {
      // Another process committed the same key first: its answer stands, and nothing of ours was stored.
      if (!isUniqueViolation(error)) throw error;
      const winner = await findIdempotencyKey(ctx.db, request.endpoint, request.key, ctx.clock.now());
      if (!winner) throw error;
      return replay<R>(request, winner);
    }
  } finally {
    ctx.idempotency.inFlight.delete(scope);
  }
}
