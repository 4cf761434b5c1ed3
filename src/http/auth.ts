import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { hashToken } from '../domain/api-keys/api-keys.ts';
import { hasAdminKey, isAdminKey } from '../domain/projects/admin-key.ts';
import type { ApiKeyRow } from '../store/api-keys.ts';
import { AppError } from '../errors.ts';
import type { ClientLimits } from './client-limits.ts';

/**
 * Who may call a route: anyone, any key (sending routes), a full-access key (the default), a
 * dashboard session (dashboard/session-hook.ts checks it, not the API key), an admin key alone
 * (MAILROOM_ADMIN_KEY or one of `npm run keys -- create --admin`: projects), or the operator (the whole
 * install's figures: an admin key when the install has one, for they count every project's work; else
 * a full-access key).
 */
export type Access = 'public' | 'sending' | 'full' | 'dashboard' | 'admin' | 'operator';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    apiKey: ApiKeyRow | null;
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/**
 * onRequest hook: resolves `Authorization: Bearer <token>` to a key and checks its permission. An
 * unknown or revoked key counts against the client's address; past the limit, the address is refused
 * whatever key it sends (http/client-limits.ts).
 */
export function authenticate(ctx: Context, limits: ClientLimits) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const access = request.routeOptions.config.access ?? 'full';
    // Unknown routes answer 404 (or 405) to anyone.
    if (access === 'public' || access === 'dashboard' || request.is404) return;
    limits.refuseIfBlocked(request, reply);
    try {
      if (access === 'admin') return checkAdminKey(ctx, request.headers.authorization, 'manages projects');
      if (access === 'operator') return checkOperator(ctx, request.headers.authorization);
      request.apiKey = await keyFor(ctx, request.headers.authorization, access);
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_api_key') limits.failed(request);
      throw error;
    }
  };
}

/** The project of the request's key: every route but the public, dashboard and admin ones has one. */
export function projectOf(request: FastifyRequest): string {
  if (!request.apiKey) throw new Error(`${request.method} ${request.url} has no API key: its route is not a project's`);
  return request.apiKey.project_id;
}

/** The operator's credential (access `operator`): an admin key when the install has one, else a full-access key. */
export async function checkOperator(ctx: Context, authorization: string | undefined): Promise<void> {
  if (await hasAdminKey(ctx)) await checkAdminKey(ctx, authorization, 'reads the whole install’s metrics');
  else await keyFor(ctx, authorization, 'full');
}

/** Only an admin key does `what`; a project's key is refused as restricted, as a sending key is elsewhere. */
async function checkAdminKey(ctx: Context, authorization: string | undefined, what: string): Promise<void> {
  const token = bearerToken(authorization);
  if (token === undefined) throw new AppError('missing_api_key', 'Missing API key in the authorization header.');
  if (await isAdminKey(ctx, token)) return;
  if (!(await ctx.apiKeys.find(hashToken(token)))) throw new AppError('invalid_api_key', 'API key is invalid.');
  throw new AppError('restricted_api_key', `Only an admin key (MAILROOM_ADMIN_KEY, or one made with \`npm run keys -- create --admin\`) ${what}.`);
}

/** The key an `Authorization: Bearer <token>` header names, if it may call a route of `access`; else why not. */
export async function keyFor(ctx: Context, authorization: string | undefined, access: 'sending' | 'full'): Promise<ApiKeyRow> {
  const token = bearerToken(authorization);
  if (token === undefined) throw new AppError('missing_api_key', 'Missing API key in the authorization header.');
  const key = await ctx.apiKeys.find(hashToken(token));
  if (!key) {
    // An admin key belongs to no project: it reads none (docs/projects.md). Looked for only once no
    // project's key matched, so that a project key's request costs no query more.
    if (await isAdminKey(ctx, token)) throw new AppError('restricted_api_key', 'An admin key manages projects only (/projects); use a project’s key.');
    throw new AppError('invalid_api_key', 'API key is invalid.');
  }
  if (access === 'full' && key.permission !== 'full_access') {
    throw new AppError('restricted_api_key', 'This API key is restricted to only send emails.');
  }
  ctx.keyUsage.touch(key.id);
  return key;
}
