import { timingSafeEqual } from 'node:crypto';
import type { Context } from '../../context.ts';
import { hashToken } from '../api-keys/api-keys.ts';

/** Whether `token` is MAILROOM_ADMIN_KEY, compared in constant time (through the hashes: equal lengths). */
export function isAdminKey(ctx: Context, token: string): boolean {
  const admin = ctx.config.adminKey;
  return admin !== undefined && timingSafeEqual(Buffer.from(hashToken(token), 'hex'), Buffer.from(hashToken(admin), 'hex'));
}
