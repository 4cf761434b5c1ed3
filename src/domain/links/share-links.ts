import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { deriveSigningKey, sign, verifySignature } from '../../secrets/signing.ts';

// A share link is its own credential: `<MAILROOM_PUBLIC_URL>/shared/<token>`, served with no API key.
// The token is base64url of a kind byte (sent or received), the email id's 16 bytes and the expiry
// (epoch ms, 6 bytes), a dot, and the HMAC-SHA256 of what precedes the dot under a key of its own: it
// can be neither forged, nor pointed at another email, nor kept past its expiry. About 75 characters.

/** Which table the email is in. */
export type SharedKind = 'sent' | 'received';

/** What a token names. */
export interface ShareTarget {
  kind: SharedKind;
  emailId: string;
}

const KINDS: Record<SharedKind, number> = { sent: 1, received: 2 };
const LENGTH = 1 + 16 + 6;

const shareKey = (secret: string) => deriveSigningKey(secret, 'mailroom share links');

const NOT_VALID = 'This link is not valid: it is incomplete or was altered.';
const EXPIRED = 'This link has expired. Ask whoever shared it for a new one.';

const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** The public URL that shows `target` until `expiresAt` (epoch ms). */
export function shareUrl(ctx: Context, target: ShareTarget, expiresAt: number): string {
  const bytes = Buffer.alloc(LENGTH);
  bytes[0] = KINDS[target.kind];
  Buffer.from(target.emailId.replaceAll('-', ''), 'hex').copy(bytes, 1);
  bytes.writeUIntBE(expiresAt, 17, 6);
  const payload = bytes.toString('base64url');
  return `${ctx.config.publicUrl}/shared/${payload}.${sign(shareKey(ctx.secret), payload)}`;
}

/** The email a token names and when it expires; not_found when it is altered, incomplete or expired. */
export function readShareToken(ctx: Context, token: string): ShareTarget & { expiresAt: number } {
  const dot = token.indexOf('.');
  if (dot === -1 || !verifySignature(shareKey(ctx.secret), token.slice(0, dot), token.slice(dot + 1))) throw new AppError('not_found', NOT_VALID);
  const bytes = Buffer.from(token.slice(0, dot), 'base64url');
  const kind = (Object.keys(KINDS) as SharedKind[]).find((name) => KINDS[name] === bytes[0]);
  if (bytes.length !== LENGTH || kind === undefined) throw new AppError('not_found', NOT_VALID);
  const expiresAt = bytes.readUIntBE(17, 6);
  if (ctx.clock.now() >= expiresAt) throw new AppError('not_found', EXPIRED);
  return { kind, emailId: uuidOf(bytes.subarray(1, 17).toString('hex')), expiresAt };
}
