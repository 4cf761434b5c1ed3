import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { deleteSession, findLiveSession, insertSession, purgeExpiredSessions } from '../../store/dashboard-sessions.ts';
import { findApiKeyByHash } from '../../store/api-keys.ts';
import { hashToken } from './api-keys.ts';

// Dashboard sessions: a full-access API key, given once at sign-in, becomes a session held by the
// server; the browser keeps only a random token (in a signed, HttpOnly cookie) whose hash finds it.

/** How long a sign-in lasts. */
export const SESSION_MS = 12 * 3600_000;

export interface Session {
  id: string;
  apiKeyId: string;
  /** The project of its key: every page shows this project's data only. */
  projectId: string;
  /** What every change made in this session must carry. */
  csrfToken: string;
  expiresAt: number;
}

const randomToken = () => randomBytes(32).toString('base64url');

/** Signs in with an API key: a new session and the token for its cookie. Only full-access keys sign in. */
export async function signIn(ctx: Context, apiKey: string): Promise<{ token: string; session: Session }> {
  const key = apiKey.trim() === '' ? undefined : await findApiKeyByHash(ctx.db, hashToken(apiKey.trim()));
  if (!key) throw new AppError('invalid_api_key', 'API key is invalid.');
  if (key.permission !== 'full_access') throw new AppError('restricted_api_key', 'A sending-access key cannot sign in to the dashboard: use a full-access key.');
  const now = ctx.clock.now();
  const token = randomToken();
  const row = { id: newId(), token_hash: hashToken(token), api_key_id: key.id, csrf_token: randomToken(), created_at: now, expires_at: now + SESSION_MS };
  await ctx.writer.transaction(async (tx) => {
    await purgeExpiredSessions(tx, now);
    await insertSession(tx, row);
  });
  ctx.keyUsage.touch(key.id);
  return { token, session: { id: row.id, apiKeyId: key.id, projectId: key.project_id, csrfToken: row.csrf_token, expiresAt: row.expires_at } };
}

/** The live session of a cookie's token, if any (ended by sign-out, expiry, or its key's deletion). */
export async function findSession(ctx: Context, token: string): Promise<Session | undefined> {
  const row = await findLiveSession(ctx.db, hashToken(token), ctx.clock.now());
  return row && { id: row.id, apiKeyId: row.api_key_id, projectId: row.project_id, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

export async function signOut(ctx: Context, token: string): Promise<void> {
  await ctx.writer.transaction((tx) => deleteSession(tx, hashToken(token)));
}
