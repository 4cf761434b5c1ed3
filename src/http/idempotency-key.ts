import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { checkIdempotencyKey, type IdempotentRequest } from '../domain/emails/idempotency.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of the raw body, taken by the JSON parser only when the request has an Idempotency-Key. */
    bodyHash: string | undefined;
  }
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
  return { apiKeyId: request.apiKey!.id, endpoint, key: checkIdempotencyKey(key), requestHash: `${variant}${request.bodyHash ?? ''}` };
}
