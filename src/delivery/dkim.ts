import { createPrivateKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import DKIM from 'nodemailer/lib/dkim';
import { seal, unseal } from '../secrets/encryption.ts';
import type { DomainRow } from '../store/domains.ts';

// DKIM: each domain gets a 2048-bit RSA key at creation; its public half is published at
// `<selector>._domainkey.<domain>`, its private half is stored sealed with MAILROOM_SECRET and only
// ever opened by the signer, in the worker.

export const DKIM_SELECTOR = 'mailroom';
const PURPOSE = 'dkim-private-key';
const generateKeyPairAsync = promisify(generateKeyPair);

/**
 * The headers a signature covers when present: the ones a reader sees and trusts, those that shape the
 * MIME body, and the list headers (RFC 8058 asks that List-Unsubscribe-Post be signed).
 */
const SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
  'Content-Transfer-Encoding', 'In-Reply-To', 'References', 'List-Id', 'List-Unsubscribe', 'List-Unsubscribe-Post',
  'List-Help', 'List-Subscribe', 'List-Post', 'List-Owner', 'List-Archive', 'Feedback-ID',
].join(':');

/** Parsed keys kept in memory; more domains than this sending at once only costs re-parsing. */
const MAX_CACHED_KEYS = 10_000;

export interface DkimKey {
  selector: string;
  /** Base64 DER SubjectPublicKeyInfo: the `p=` of the DNS record. */
  publicKey: string;
  sealedPrivateKey: string;
}

/** A fresh RSA key for a domain, its private half sealed to that domain's id. */
export async function generateDkimKey(secret: string, domainId: string): Promise<DkimKey> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: DKIM_SELECTOR, publicKey: publicKey.toString('base64'), sealedPrivateKey: seal(secret, PURPOSE, domainId, privateKey) };
}

export type SigningDomain = Pick<DomainRow, 'id' | 'name' | 'dkim_selector' | 'dkim_private_key'>;

export interface DkimSigner {
  /** The message with a DKIM-Signature (rsa-sha256, relaxed/relaxed) for `domain` prepended. */
  sign(raw: Buffer, domain: SigningDomain): Promise<Buffer>;
}

function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * Signs with nodemailer's DKIM signer. A domain's key is unsealed and parsed once, then its signer is
 * reused: parsing a PEM key costs more than the signature itself. The cache is keyed by domain id and
 * selector, so a domain deleted and added again, or a new key under a new selector, is never signed
 * with a stale key.
 */
export function createDkimSigner(secret: string): DkimSigner {
  const signers = new Map<string, DKIM>();
  const signerFor = (domain: SigningDomain): DKIM => {
    const cacheKey = `${domain.id}:${domain.dkim_selector}`;
    let signer = signers.get(cacheKey);
    if (!signer) {
      const privateKey = createPrivateKey(unseal(secret, PURPOSE, domain.id, domain.dkim_private_key));
      signer = new DKIM({ domainName: domain.name, keySelector: domain.dkim_selector, privateKey, headerFieldNames: SIGNED_HEADERS });
      if (signers.size >= MAX_CACHED_KEYS) signers.delete(signers.keys().next().value!);
      signers.set(cacheKey, signer);
    }
    return signer;
  };
  return { sign: (raw, domain) => collect(signerFor(domain).sign(raw)) };
}
