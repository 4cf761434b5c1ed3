import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, invalidField, missingField, quoted } from '../errors.ts';
import { invalidIdempotencyKey } from '../domain/emails/idempotency.ts';
import { faultError } from '../store/availability.ts';

export interface SchemaError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { description?: string };
}

/** What each bound counts, for "must have at most 998 characters". */
const BOUNDS: Record<string, string> = { maxLength: 'characters', maxItems: 'items', maxProperties: 'entries' };

/** "/tags/0/name" -> "tags[0].name", as a client wrote it. */
function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

/** Turns Ajv's first complaint into Resend's wording: a missing field, or an invalid one by name. */
export function fromSchemaErrors(errors: SchemaError[], context: string | undefined): AppError {
  const required = errors.find((e) => e.keyword === 'required');
  if (required) return missingField(fieldName(required.instancePath, String(required.params.missingProperty)));
  // A value matching no branch of a union: the union's description says what was expected, unless the
  // value had a branch's type and broke one of its bounds (an array of 51 addresses): then that bound.
  const isUnion = (e: SchemaError) => e.keyword === 'anyOf' || e.keyword === 'oneOf';
  const bound = errors.find((e) => !isUnion(e) && e.keyword !== 'type');
  const union = bound ? undefined : errors.find(isUnion);
  const error = bound ?? union ?? errors[0]!;
  const field = fieldName(error.instancePath) || (context === 'body' ? 'body' : (context ?? 'request'));
  if (context === 'headers' && field === 'idempotency-key') return invalidIdempotencyKey();
  if (union?.parentSchema?.description) return invalidField(field, `expected ${union.parentSchema.description}.`);
  const allowed = error.params.allowedValues as unknown[] | undefined;
  const bounded = BOUNDS[error.keyword];
  const detail = allowed
    ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
    : bounded
      ? `must have at most ${error.params.limit as number} ${bounded}`
      : error.message;
  return invalidField(field, `${detail}.`);
}

/**
 * A body of a type the route does not read, or none where one is needed: names the Content-Type the
 * route takes (JSON, unless its schema `consumes` others), since `curl -d` sends a form by default.
 */
export function unsupportedMediaType(request: FastifyRequest): AppError {
  const takes = (request.routeOptions.schema?.consumes ?? ['application/json']).map((type) => `\`Content-Type: ${type}\``);
  const sent = request.headers['content-type']?.split(';')[0]!.trim();
  const has = sent ? `this request's Content-Type is ${quoted(sent)}` : 'this request has no Content-Type';
  return new AppError('unsupported_media_type', `Send the request body with ${takes.join(' or ')}; ${has}.`);
}

/** Maps anything thrown while serving a request to an AppError. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const e = error as FastifyError & { validation?: SchemaError[] };
  // A request with neither body nor Content-Type reaches validation without a body.
  if (e.validation && e.validationContext === 'body' && request.body === undefined) return unsupportedMediaType(request);
  if (e.validation) return fromSchemaErrors(e.validation, e.validationContext);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('malformed_request', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType(request);
  }
  if (error instanceof SyntaxError || e.statusCode === 400) {
    return new AppError('malformed_request', 'The request body is not valid JSON.');
  }
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError('malformed_request', 'The request could not be read.');
  }
  return faultError(error) ?? new AppError('internal_server_error', 'An unexpected error occurred.');
}

/**
 * Reads and discards what is left of a request's body. An answer sent while the client is still
 * uploading makes many clients (Python's among them) fail with a broken pipe instead of reading it;
 * the request timeout bounds how long this may take.
 */
export async function drainBody(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  raw.resume();
  await new Promise<void>((resolve) => {
    raw.once('end', resolve);
    raw.once('close', resolve);
  });
}

/**
 * The one error handler: a Resend-shaped body, and 5xx details only in the log, under the request id.
 * A condition that passes (the database away, full) is no bug: Retry-After, and no line per request
 * (store/availability.ts logs the outage once).
 */
export async function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const appError = toAppError(error, request);
  const body = appError.toBody();
  const { retryAfter } = appError;
  if (appError.headers) reply.headers(appError.headers);
  if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
  else if (appError.status >= 500) {
    request.log.error({ err: error }, 'unexpected error');
    body.message = `${body.message} Request id: ${request.id}.`;
  }
  await drainBody(request);
  return reply.status(appError.status).send(body);
}
