import { timingSafeEqual } from 'node:crypto';
import type { Context } from '../../context.ts';
import { toTimestamp } from '../../time/clock.ts';
import { newId } from '../../time/ids.ts';
import { insertAdminKey } from '../../store/admin-keys.ts';
import { checkName, hashToken, newToken } from '../api-keys/api-keys.ts';

// The admin keys (docs/projects.md): MAILROOM_ADMIN_KEY, and those made with `npm run keys -- create
// --admin` (admin_keys). Each manages projects and reads no project's data.

type AdminKeys = Pick<Context, 'config' | 'adminKeys'>;

/** Whether `token` is an admin key: MAILROOM_ADMIN_KEY (compared in constant time, through the hashes) or one of admin_keys. */
export async function isAdminKey(ctx: AdminKeys, token: string): Promise<boolean> {
  const configured = ctx.config.adminKey;
  const hashed = hashToken(token);
  if (configured !== undefined && timingSafeEqual(Buffer.from(hashed, 'hex'), Buffer.from(hashToken(configured), 'hex'))) return true;
  return ctx.adminKeys.has(hashed);
}

/** Whether the install has an admin key: then the operator's figures answer to one alone. */
export async function hasAdminKey(ctx: AdminKeys): Promise<boolean> {
  if (ctx.config.adminKey !== undefined) return true;
  return ctx.adminKeys.any();
}

/** Creates an admin key and returns its token, the only time the token is ever shown. */
export async function createAdminKey(ctx: Pick<Context, 'db' | 'clock'>, name: string | undefined): Promise<{ id: string; token: string }> {
  const token = newToken();
  const row = { id: newId(), name: checkName(name), token_hash: hashToken(token), created_at: toTimestamp(ctx.clock.now()) };
  await insertAdminKey(ctx.db, row);
  return { id: row.id, token };
}
