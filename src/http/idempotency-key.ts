import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { IdempotentRequest } from '../domain/emails/idempotency.ts';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of the raw body, taken by the JSON parser only when the request has an Idempotency-Key. */
    bodyHash: string | undefined;
  }
}

/** Resend's answer to a key of the wrong length. */
export function invalidIdempotencyKey(): AppError {
  return new AppError('invalid_idempotency_key', 'Idempotency keys, if present, must have between 1 and 256 characters.');
}

/**
 * Hashes a raw JSON body when the request has an Idempotency-Key. Requests are compared by their bytes,
 * as they came: an SDK sends the same bytes for the same call, and hashing bytes costs nothing in the
 * shape of the JSON, however deeply nested.
 */
export function hashBodyIfIdempotent(request: FastifyRequest, raw: string): void {
  if (request.headers['idempotency-key'] !== undefined) request.bodyHash = createHash('sha256').update(raw).digest('hex');
}

/**
 * The Idempotency-Key of a request to `endpoint`, scoped to its API key; undefined when it has none.
 * `variant` is what else makes two requests with the same body different (the batch validation mode).
 */
export function idempotencyOf(request: FastifyRequest, endpoint: string, variant = ''): IdempotentRequest | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length < 1 || key.length > 256) throw invalidIdempotencyKey();
  return { apiKeyId: request.apiKey!.id, endpoint, key, requestHash: `${variant}${request.bodyHash ?? ''}` };
}
