import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.ts';
import { AppError, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { deleteSession, findLiveSession, insertSession, purgeExpiredSessions } from '../../store/dashboard-sessions.ts';
import { deleteAdminSession, findLiveAdminSession, insertAdminSession, purgeExpiredAdminSessions, setAdminSessionProject } from '../../store/admin-sessions.ts';
import { findApiKeyByHash } from '../../store/api-keys.ts';
import { isAdminKey } from '../projects/admin-key.ts';
import { hashToken } from './api-keys.ts';

// Dashboard sessions: a full-access API key, given once at sign-in, becomes a session held by the
// server; the browser keeps only a random token (in a signed, HttpOnly cookie) whose hash finds it.
// An admin key (MAILROOM_ADMIN_KEY, or one of admin_keys) signs in too: its session manages projects,
// and browses the one it picks with the switcher (docs/projects.md).

/** How long a sign-in lasts. */
export const SESSION_MS = 12 * 3600_000;

/** A session browsing a project: every page shows this project's data only. */
export interface Session {
  id: string;
  /** The key it signed in with; null for an admin key, which is no row of api_keys. */
  apiKeyId: string | null;
  /** The project of its key, or the one the admin picked. */
  projectId: string;
  /** Signed in with the admin key: it may open the projects pages and switch. */
  admin: boolean;
  /** The admin's project's name, for the banner that says which project it browses. */
  projectName: string | null;
  /** What every change made in this session must carry. */
  csrfToken: string;
  expiresAt: number;
}

/** A session as found: an admin's browses no project until it picks one. */
export type SignedIn = Omit<Session, 'projectId'> & { projectId: string | null };

const randomToken = () => randomBytes(32).toString('base64url');

/** Signs in with an API key or an admin key: a new session and the token for its cookie. Only full-access keys sign in. */
export async function signIn(ctx: Context, apiKey: string): Promise<{ token: string; session: SignedIn }> {
  const given = apiKey.trim();
  const now = ctx.clock.now();
  const token = randomToken();
  const base = { id: newId(), token_hash: hashToken(token), csrf_token: randomToken(), created_at: now, expires_at: now + SESSION_MS };
  const session = { id: base.id, csrfToken: base.csrf_token, expiresAt: base.expires_at };
  if (given !== '' && (await isAdminKey(ctx, given))) {
    await ctx.writer.transaction(async (tx) => {
      await purgeExpiredAdminSessions(tx, now);
      await insertAdminSession(tx, { ...base, admin_key_hash: hashToken(given), project_id: null });
    });
    return { token, session: { ...session, apiKeyId: null, projectId: null, admin: true, projectName: null } };
  }
  const key = given === '' ? undefined : await findApiKeyByHash(ctx.db, hashToken(given));
  if (!key) throw new AppError('invalid_api_key', 'API key is invalid.');
  if (key.permission !== 'full_access') throw new AppError('restricted_api_key', 'A sending-access key cannot sign in to the dashboard: use a full-access key.');
  await ctx.writer.transaction(async (tx) => {
    await purgeExpiredSessions(tx, now);
    await insertSession(tx, { ...base, api_key_id: key.id });
  });
  ctx.keyUsage.touch(key.id);
  return { token, session: { ...session, apiKeyId: key.id, projectId: key.project_id, admin: false, projectName: null } };
}

/** The live session of a cookie's token, if any (ended by sign-out, expiry, its key's deletion, a changed MAILROOM_ADMIN_KEY or a deleted admin key). */
export async function findSession(ctx: Context, token: string): Promise<SignedIn | undefined> {
  const now = ctx.clock.now();
  const tokenHash = hashToken(token);
  const row = await findLiveSession(ctx.db, tokenHash, now);
  if (row) return { id: row.id, apiKeyId: row.api_key_id, projectId: row.project_id, admin: false, projectName: null, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  const configured = ctx.config.adminKey === undefined ? undefined : hashToken(ctx.config.adminKey);
  const admin = await findLiveAdminSession(ctx.db, tokenHash, configured, now);
  return (
    admin && { id: admin.id, apiKeyId: null, projectId: admin.project_id, admin: true, projectName: admin.project_name, csrfToken: admin.csrf_token, expiresAt: admin.expires_at }
  );
}

/** The switcher: the admin's session browses project `projectId` from now on (null: none, back to the list). */
export async function switchProject(ctx: Context, session: SignedIn, projectId: string | null): Promise<void> {
  if (!session.admin) throw new AppError('restricted_api_key', 'Only an admin key switches projects.');
  const found = await ctx.writer.transaction((tx) => setAdminSessionProject(tx, session.id, projectId));
  if (!found) throw notFound('Project');
}

export async function signOut(ctx: Context, token: string): Promise<void> {
  const tokenHash = hashToken(token);
  await ctx.writer.transaction(async (tx) => {
    await deleteSession(tx, tokenHash);
    await deleteAdminSession(tx, tokenHash);
  });
}
