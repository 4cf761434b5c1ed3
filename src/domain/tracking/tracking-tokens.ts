import { timingSafeEqual } from 'node:crypto';
import { deriveSigningKey, sign } from '../../secrets/signing.ts';

// The token of a tracking URL is its only credential: it names one recipient of one email (and, for a
// click, the link it stands for) and cannot be forged or altered without MAILROOM_SECRET. Binary, then
// base64url: a kind byte, the email id's 16 bytes, the recipient's length (2 bytes) and UTF-8 bytes,
// then a click's link; a dot; 22 characters (132 bits) of an HMAC-SHA256 over what precedes the dot.
// An open's token is about 80 characters; a click's adds 4/3 of its link's length.

export type TrackingClaims = { kind: 'open'; emailId: string; recipient: string } | { kind: 'click'; emailId: string; recipient: string; link: string };

const KINDS = { open: 1, click: 2 } as const;
const MAC_LENGTH = 22;
const HEAD = 1 + 16 + 2;

/** The signing key, derived from MAILROOM_SECRET for this one purpose. */
export function trackingKey(secret: string): Buffer {
  return deriveSigningKey(secret, 'mailroom tracking links');
}

const mac = (key: Buffer, payload: string) => sign(key, payload).slice(0, MAC_LENGTH);

/** The signed token of an open (the pixel) or of a click on `link`. */
export function createTrackingToken(key: Buffer, claims: TrackingClaims): string {
  const recipient = Buffer.from(claims.recipient, 'utf8');
  const head = Buffer.alloc(HEAD);
  head[0] = KINDS[claims.kind];
  Buffer.from(claims.emailId.replaceAll('-', ''), 'hex').copy(head, 1);
  head.writeUInt16BE(recipient.length, 17);
  const link = claims.kind === 'click' ? Buffer.from(claims.link, 'utf8') : Buffer.alloc(0);
  const payload = Buffer.concat([head, recipient, link]).toString('base64url');
  return `${payload}.${mac(key, payload)}`;
}

const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** The claims of a token signed with `key`, of the kind expected; undefined for anything else. */
export function readTrackingToken(key: Buffer, token: string, kind: TrackingClaims['kind']): TrackingClaims | undefined {
  const dot = token.indexOf('.');
  if (dot === -1) return undefined;
  const payload = token.slice(0, dot);
  const expected = Buffer.from(mac(key, payload));
  const given = Buffer.from(token.slice(dot + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const bytes = Buffer.from(payload, 'base64url');
  if (bytes.length < HEAD || bytes[0] !== KINDS[kind]) return undefined;
  const end = HEAD + bytes.readUInt16BE(17);
  if (end > bytes.length) return undefined;
  const emailId = uuidOf(bytes.subarray(1, 17).toString('hex'));
  const recipient = bytes.subarray(HEAD, end).toString('utf8');
  if (kind === 'open') return end === bytes.length ? { kind, emailId, recipient } : undefined;
  return { kind, emailId, recipient, link: bytes.subarray(end).toString('utf8') };
}
