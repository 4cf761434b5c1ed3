import { hash, randomBytes } from 'node:crypto';
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { MAX_RATE_LIMIT } from '../../config.ts';
import { AppError, invalidField, missingField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import * as store from '../../store/api-keys.ts';
import { findDomain } from '../../store/domains.ts';
import { DEFAULT_PROJECT_ID } from '../../store/projects.ts';
import type { PageRequest } from '../../store/paginate.ts';

export type Permission = 'full_access' | 'sending_access';

/** Tokens are only ever stored as this hash. SHA-256 suffices: tokens are 240 random bits, not passwords. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export function newToken(): string {
  return `re_${randomBytes(30).toString('base64url')}`;
}

export function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  if (name.length > 50) throw new AppError('validation_error', 'Invalid `name` field: must be at most 50 characters.');
  return name;
}

/** A key's own rate: requests per second, or null for MAILROOM_RATE_LIMIT (a Mailroom extension). */
function checkRateLimit(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > MAX_RATE_LIMIT) {
    throw invalidField('rate_limit', `expected a whole number of requests per second from 1 to ${MAX_RATE_LIMIT}, or null for the default.`);
  }
  return value;
}

/** What creating a key needs: a process that serves nothing (`npm run keys`) has no more. */
type KeyStore = Pick<Context, 'db' | 'clock'>;

/** A new key's row in `project`, for its token. */
export function keyRow(ctx: Pick<Context, 'clock'>, project: string, token: string, name: string, permission: Permission, domainId: string | null, rateLimit: number | null): store.ApiKeyRow {
  return {
    id: newId(),
    project_id: project,
    name,
    token_hash: hashToken(token),
    permission,
    domain_id: domainId,
    created_at: toTimestamp(ctx.clock.now()),
    last_used_at: null,
    configured: 0,
    rate_limit: rateLimit,
  };
}

/** Creates a key in `project` and returns its token, the only time the token is ever shown. */
export async function createApiKey(
  ctx: KeyStore,
  project: string,
  input: { name?: string; permission?: string; domain_id?: string; rate_limit?: number | null },
): Promise<{ id: string; token: string }> {
  const name = checkName(input.name);
  const rateLimit = checkRateLimit(input.rate_limit);
  const permission = input.permission ?? 'full_access';
  if (permission !== 'full_access' && permission !== 'sending_access') {
    throw new AppError('invalid_access', 'Access must be "full_access" | "sending_access"');
  }
  // As in Resend, a domain restricts only a sending key.
  const domainId = permission === 'sending_access' ? (input.domain_id ?? null) : null;
  if (domainId !== null && !(await findDomain(ctx.db, project, domainId))) throw invalidField('domain_id', 'no domain has this id.');
  const token = newToken();
  const row = keyRow(ctx, project, token, name, permission, domainId, rateLimit);
  await store.insertApiKey(ctx.db, row);
  return { id: row.id, token };
}

/**
 * MAILROOM_API_KEY, when set, is a full-access key, and replaces the key an earlier value of the
 * variable gave (a changed key is a rotated key). Before the server listens, so the key works from the
 * first request.
 */
export async function seedConfiguredKey(ctx: Context): Promise<void> {
  const configured = ctx.config.apiKey;
  if (configured === undefined) return;
  const row = { ...keyRow(ctx, DEFAULT_PROJECT_ID, configured, 'MAILROOM_API_KEY', 'full_access', null, null), configured: 1 };
  const replaced = await ctx.writer.transaction((tx) => store.replaceConfiguredKey(tx, row));
  for (const id of replaced) ctx.apiKeys.forget(id);
}

/**
 * With no key configured and none at all, one is created; its token is returned, to be printed once.
 * After the server listens: a start that fails earlier (a port in use) leaves no key unseen.
 */
export async function createFirstKey(ctx: Context): Promise<string | undefined> {
  if (ctx.config.apiKey !== undefined || (await store.countApiKeys(ctx.db)) > 0) return undefined;
  const { token } = await createApiKey(ctx, DEFAULT_PROJECT_ID, { name: 'Default', permission: 'full_access' });
  return token;
}

/** Both, for a process that serves no one meanwhile (tests, benches). */
export async function seedApiKey(ctx: Context): Promise<string | undefined> {
  await seedConfiguredKey(ctx);
  return createFirstKey(ctx);
}

export async function listApiKeys(ctx: Context, project: string, page: PageRequest) {
  return store.listApiKeys(ctx.db, project, page);
}

/** Renames a key, sets its rate (null: back to the default), or both; a new rate applies at once in this process. */
export async function updateApiKey(ctx: Context, project: string, id: string, input: { name?: string; rate_limit?: number | null }): Promise<void> {
  const changes: store.ApiKeyChanges = {};
  if (input.name !== undefined || input.rate_limit === undefined) changes.name = checkName(input.name);
  if (input.rate_limit !== undefined) changes.rate_limit = checkRateLimit(input.rate_limit);
  if (!(await store.updateApiKey(ctx.db, project, id, changes))) throw notFound('API key');
  if (changes.rate_limit !== undefined) ctx.apiKeys.forget(id);
}

export async function deleteApiKey(ctx: Context, project: string, id: string): Promise<void> {
  if (!(await store.deleteApiKey(ctx.db, project, id))) throw notFound('API key');
  ctx.apiKeys.forget(id);
}
