import type { FastifyRequest } from 'fastify';
import { deriveSigningKey, sign, verifySignature } from '../secrets/signing.ts';

// The dashboard's cookies: each value signed (HMAC under a key of its own from MAILROOM_SECRET), read
// only when its signature holds; HttpOnly, SameSite=Strict, Secure over https, scoped to /dashboard.

export const SESSION_COOKIE = 'mailroom_session';
/** The sign-in form's CSRF token, before there is a session (a double-submit cookie). */
export const SIGN_IN_COOKIE = 'mailroom_sign_in';

export type CookieKey = Buffer;

export const cookieKey = (secret: string): CookieKey => deriveSigningKey(secret, 'mailroom dashboard cookies');

/** The value of cookie `name`, if it is there and its signature holds. */
export function readCookie(request: FastifyRequest, key: CookieKey, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1 || part.slice(0, equals).trim() !== name) continue;
    const signed = part.slice(equals + 1).trim();
    const dot = signed.lastIndexOf('.');
    if (dot === -1) return undefined;
    const [value, signature] = [signed.slice(0, dot), signed.slice(dot + 1)];
    return verifySignature(key, `${name}=${value}`, signature) ? value : undefined;
  }
  return undefined;
}

/** A Set-Cookie value for cookie `name`: `value` signed, for `maxAgeSeconds` (0 ends it). */
export function setCookie(key: CookieKey, name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  const signed = value === '' ? '' : `${value}.${sign(key, `${name}=${value}`)}`;
  return `${name}=${signed}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}
