import { deriveSigningKey, sign, verifySignature } from '../../secrets/signing.ts';

/** What an unsubscribe link stands for: a contact, and the broadcast (and its topic) that carried it. */
export interface UnsubscribeClaims {
  contactId: string;
  broadcastId: string;
  topicId: string | null;
}

/** The signing key, derived from MAILROOM_SECRET for this one purpose. */
export function unsubscribeKey(secret: string): Buffer {
  return deriveSigningKey(secret, 'mailroom unsubscribe links');
}

/** A URL-safe token: the claims and their HMAC-SHA256, so a link cannot be forged or altered. */
export function createUnsubscribeToken(key: Buffer, claims: UnsubscribeClaims): string {
  const payload = Buffer.from(JSON.stringify([claims.contactId, claims.broadcastId, claims.topicId])).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

/** The claims of a token signed with `key`; undefined for anything else. */
export function readUnsubscribeToken(key: Buffer, token: string): UnsubscribeClaims | undefined {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  if (!verifySignature(key, payload, signature)) return undefined;
  try {
    const [contactId, broadcastId, topicId] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    if (typeof contactId !== 'string' || typeof broadcastId !== 'string' || !(topicId === null || typeof topicId === 'string')) {
      return undefined;
    }
    return { contactId, broadcastId, topicId };
  } catch {
    return undefined;
  }
}
