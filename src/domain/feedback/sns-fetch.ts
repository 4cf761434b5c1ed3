import { X509Certificate, type KeyObject } from 'node:crypto';
import { get } from 'node:https';
import { rootCertificates } from 'node:tls';
import { AppError } from '../../errors.ts';

// What Mailroom fetches for SNS: the certificate a message is signed with, and the URL that confirms a
// subscription; only over HTTPS, only from SNS's hosts (sns.<region>.amazonaws.com), or from the one
// host FEEDBACK_SNS_HOST names (tests), with no redirect followed and a small answer.

const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
const MAX_ANSWER = 64 * 1024;
const TIMEOUT_MS = 10_000;
/** Certificates kept: SNS signs with few, and rotates them rarely. */
const MAX_CERTIFICATES = 20;

/** `raw` as a URL Mailroom may fetch for SNS, or undefined. */
export function snsUrl(raw: string | undefined, certHost: string | undefined): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw ?? '');
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return undefined;
  return (certHost ? url.host === certHost : SNS_HOST.test(url.hostname) && url.port === '') ? url : undefined;
}

/** GETs `url` over HTTPS (the system's CAs, and `ca` beside them): the body of a 200, or an error saying why not. */
function fetchHttps(url: URL, ca: string | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = get(url, { ca: ca ? [...rootCertificates, ca] : undefined, timeout: TIMEOUT_MS }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        return reject(new Error(`${url.host} answered ${response.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER) request.destroy(new Error(`${url.host} answered more than ${MAX_ANSWER} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`${url.host} did not answer within ${TIMEOUT_MS / 1000} s`)));
    request.on('error', reject);
  });
}

export interface SnsFetcher {
  /** The public key of the certificate at `url` (an allowed SNS URL), fetched once and kept. */
  signingKey(url: URL): Promise<KeyObject>;
  /** Confirms a subscription: GETs its SubscribeURL (an allowed SNS URL). */
  confirm(url: URL): Promise<void>;
}

export function snsFetcher(ca: string | undefined): SnsFetcher {
  const keys = new Map<string, Promise<KeyObject>>();
  return {
    signingKey(url) {
      let key = keys.get(url.href);
      if (!key) {
        key = fetchHttps(url, ca).then((pem) => new X509Certificate(pem).publicKey);
        // A failed fetch is not kept: the next message tries again.
        void key.catch(() => keys.delete(url.href));
        if (keys.size >= MAX_CERTIFICATES) keys.delete(keys.keys().next().value!);
        keys.set(url.href, key);
      }
      return key.catch((error: Error) => {
        throw new AppError('invalid_signature', `The SNS signing certificate could not be fetched: ${error.message}`);
      });
    },
    async confirm(url) {
      try {
        await fetchHttps(url, ca);
      } catch (error) {
        throw new AppError('service_unavailable', `The SNS subscription could not be confirmed: ${(error as Error).message}`);
      }
    },
  };
}
