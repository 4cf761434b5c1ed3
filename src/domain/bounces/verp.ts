import { timingSafeEqual } from 'node:crypto';
import { deriveSigningKey, sign } from '../../secrets/signing.ts';

// VERP: every message goes out with an envelope sender of its own, `bounces+<token>@<host>`, so a
// bounce names what it is about whatever the remote server writes in it. The token is the email id
// (32 hex digits) and 16 hex digits of an HMAC over the id and the recipient: it names one recipient
// of one email and cannot be forged without MAILROOM_SECRET. Hex, not base64url: some servers
// lowercase the address they bounce to. 8 + 48 characters, within a local part's 64.

const PREFIX = 'bounces+';
const TOKEN = /^bounces\+([0-9a-f]{32})([0-9a-f]{16})$/;

/** The signing key, derived from MAILROOM_SECRET for this one purpose. */
export function verpKey(secret: string): Buffer {
  return deriveSigningKey(secret, 'mailroom verp addresses');
}

const hexId = (emailId: string) => emailId.replaceAll('-', '');
const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

function mac(key: Buffer, emailId: string, recipient: string): Buffer {
  return Buffer.from(sign(key, `${emailId}\n${recipient.toLowerCase()}`), 'base64url').subarray(0, 8);
}

/** The envelope sender of `emailId`'s message to `recipient`, at `host`. */
export function bounceAddress(key: Buffer, emailId: string, recipient: string, host: string): string {
  return `${PREFIX}${hexId(emailId)}${mac(key, emailId, recipient).toString('hex')}@${host}`;
}

/** Whether an address has the shape of a bounce address (whatever its token is worth). */
export function isBounceLocalPart(localPart: string): boolean {
  return localPart.toLowerCase().startsWith(PREFIX);
}

/** The email a bounce address names and its signature, or undefined when it is no token of ours. */
export function readBounceAddress(address: string): { emailId: string; signature: Buffer } | undefined {
  const match = address.slice(0, address.lastIndexOf('@')).toLowerCase().match(TOKEN);
  return match ? { emailId: uuidOf(match[1]!), signature: Buffer.from(match[2]!, 'hex') } : undefined;
}

/** The recipient among `recipients` that `signature` was made for, compared in constant time; undefined: forged. */
export function signedRecipient(key: Buffer, emailId: string, signature: Buffer, recipients: string[]): string | undefined {
  return recipients.find((recipient) => timingSafeEqual(mac(key, emailId, recipient), signature));
}
