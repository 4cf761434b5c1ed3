import http from 'node:http';
import https from 'node:https';
import { guardedLookup, isPrivateLiteral } from '../net-guard.ts';

// Connections are kept alive between posts, as an application's HTTP client would: a new TCP (and TLS)
// connection per event cost more than the post. The address guard runs on each new connection.
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** A webhook answers within this long, or the attempt failed. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** How much of an answer is kept with the attempt. */
const KEPT_BYTES = 1024;

export interface PostResult {
  /** The HTTP status, or null when none came (refused, timed out, private address). */
  status: number | null;
  error: string | null;
  /** The first KB of the answer's body. */
  response: string | null;
  durationMs: number;
}

/**
 * POSTs one webhook: no redirects followed (a 3xx is a failed attempt), a timeout, the answer read up to
 * its first KB, and no private address unless allowed (checked on the address connected to).
 */
export function postWebhook(endpoint: string, body: string, headers: Record<string, string>, allowPrivate: boolean): Promise<PostResult> {
  const started = performance.now();
  const done = (status: number | null, error: string | null, response: string | null): PostResult => ({
    status,
    error,
    response,
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(endpoint);
  if (!allowPrivate && isPrivateLiteral(url)) return Promise.resolve(done(null, 'the endpoint is a private address', null));
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup: guardedLookup(allowPrivate),
        timeout: WEBHOOK_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () => resolve(done(response.statusCode ?? null, null, Buffer.concat(chunks).toString('utf8').slice(0, KEPT_BYTES)));
        response.on('data', (chunk: Buffer) => {
          if (size < KEPT_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= KEPT_BYTES) {
            response.destroy();
            finish();
          }
        });
        response.on('end', finish);
        response.on('error', finish);
      },
    );
    request.on('timeout', () => request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    request.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EPRIVATE' ? 'the endpoint resolves to a private address' : error.code === 'ETIMEDOUT' ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : (error.code ?? error.message);
      resolve(done(null, reason, null));
    });
    request.end(body);
  });
}
