import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { deriveSigningKey, sign, verifySignature } from '../../secrets/signing.ts';
import type { DownloadKind } from './downloads.ts';

// A download link is its own credential: `<MAILROOM_PUBLIC_URL>/downloads/<kind>/<id>?expires=<unix s>
// &signature=<HMAC>`, served with no API key. The HMAC covers kind, id and expiry under a key of its
// own, so a link can be neither forged, nor pointed at another file, nor kept past its expiry.

/** How long a link works: an hour, long enough to fetch a file, short enough that a leaked link soon dies. */
export const DOWNLOAD_LIFETIME_MS = 60 * 60 * 1000;

/** What a link serves: a file of some kind, by an id of that kind. */
export interface DownloadTarget {
  kind: DownloadKind;
  id: string;
}

/** A link as it comes back in a request: any part may be missing or altered. */
export interface PresentedLink {
  kind: string;
  id: string;
  expires?: string;
  signature?: string;
}

const downloadKey = (secret: string) => deriveSigningKey(secret, 'mailroom download links');

const signedPayload = (kind: string, id: string, expires: string) => JSON.stringify([kind, id, expires]);

const NOT_VALID = 'Download link not valid: it is incomplete or was altered. Ask the API for a new one.';
const EXPIRED = 'Download link expired: links work for an hour. Ask the API for a new one.';

/** When a link made now expires (epoch ms, a whole second): DOWNLOAD_LIFETIME_MS from now. */
export function downloadExpiry(ctx: Context): number {
  return Math.floor((ctx.clock.now() + DOWNLOAD_LIFETIME_MS) / 1000) * 1000;
}

/** The signed URL of `target`, valid until `expiresAt` (epoch ms, rounded down to the second). */
export function downloadUrl(ctx: Context, target: DownloadTarget, expiresAt: number): string {
  const expires = String(Math.floor(expiresAt / 1000));
  const signature = sign(downloadKey(ctx.secret), signedPayload(target.kind, target.id, expires));
  return `${ctx.config.publicUrl}/downloads/${target.kind}/${encodeURIComponent(target.id)}?expires=${expires}&signature=${signature}`;
}

/** `download_url` and `expires_at` (ISO 8601) as Resend's objects carry them. */
export function downloadLink(ctx: Context, target: DownloadTarget, expiresAt = downloadExpiry(ctx)) {
  return { download_url: downloadUrl(ctx, target, expiresAt), expires_at: new Date(expiresAt).toISOString() };
}

/** The kind and id a link was signed for; not_found when any part is missing or altered, or it has expired. */
export function verifyDownloadLink(ctx: Context, link: PresentedLink): { kind: string; id: string } {
  const { kind, id, expires, signature } = link;
  if (expires === undefined || signature === undefined || !/^\d{1,12}$/.test(expires)) throw new AppError('not_found', NOT_VALID);
  if (!verifySignature(downloadKey(ctx.secret), signedPayload(kind, id, expires), signature)) throw new AppError('not_found', NOT_VALID);
  if (ctx.clock.now() > Number(expires) * 1000) throw new AppError('not_found', EXPIRED);
  return { kind, id };
}
