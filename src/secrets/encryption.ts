import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Secrets at rest (DKIM private keys) are sealed with AES-256-GCM under a key derived from
// MAILROOM_SECRET by HKDF with a purpose label, so one secret keys several uses independently.
// `context` (the owning row's id) is authenticated too: a sealed value copied to another row fails.

const VERSION = 'v1';

function keyFor(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', `mailroom:${purpose}`, 32));
}

/** Encrypts `plaintext` for `purpose`; the result is text: version, IV, tag and ciphertext. */
export function seal(secret: string, purpose: string, context: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret, purpose), iv).setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** Decrypts what `seal` produced with the same secret, purpose and context; throws otherwise. */
export function unseal(secret: string, purpose: string, context: string, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(secret, purpose), Buffer.from(iv, 'base64url'))
    .setAAD(Buffer.from(context))
    .setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
