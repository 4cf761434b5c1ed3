import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

// Links that are their own credential (unsubscribe, downloads, shared emails) carry an HMAC-SHA256 under a key
// derived from MAILROOM_SECRET by HKDF with a label of their own, so one secret keys each use apart.

/** A 32-byte signing key for the use `label` names. */
export function deriveSigningKey(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', label, 32));
}

/** The HMAC-SHA256 of `payload`, base64url. */
export function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/** Whether `signature` is what `sign` gives for `payload`, compared in constant time. */
export function verifySignature(key: Buffer, payload: string, signature: string): boolean {
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
