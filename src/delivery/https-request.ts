import type { Resolver } from 'node:dns/promises';
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { isPrivateLiteral, resolverLookup } from '../net-guard.ts';

// The HTTPS requests of MTA-STS and TLS reporting: a policy fetched from `mta-sts.<domain>`, a report
// posted to a domain's endpoint. Certificates are checked (beside the system's CAs, MAILROOM_OUTBOUND_CA's
// for tests), no redirect is followed (RFC 8461 3.3), the answer is capped and the whole exchange timed.

export interface HttpsOptions {
  method: 'GET' | 'POST';
  /** The port to connect to (the URL's otherwise). */
  port?: number;
  headers?: Record<string, string>;
  body?: Buffer;
  /** PEM CAs trusted beside the system's. */
  ca: string | undefined;
  /** Host names are looked up here (DNS_SERVERS), and private addresses refused unless `allowPrivate`. */
  resolver: Resolver;
  allowPrivate: boolean;
  timeoutMs: number;
  /** A longer answer is a failure. */
  maxBytes: number;
}

/** Why a request failed, in words fit for a report or a log. */
export class HttpsFailure extends Error {
  constructor(
    message: string,
    /** The TLS certificate was refused. */
    readonly certificate = false,
  ) {
    super(message);
  }
}

const CERTIFICATE_ERRORS = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/;

/** The status and body of one request; a redirect is an answer like any other (the caller refuses it). */
export function httpsRequest(url: URL, options: HttpsOptions): Promise<{ status: number; body: Buffer }> {
  // An IP literal is connected to without a lookup, so it is checked here.
  if (!options.allowPrivate && isPrivateLiteral(url)) return Promise.reject(new HttpsFailure(`${url.hostname} is a private address`));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method,
        port: options.port ?? url.port,
        headers: { ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) },
        ca: options.ca ? [...rootCertificates, options.ca] : undefined,
        lookup: resolverLookup(options.resolver, options.allowPrivate),
        servername: url.hostname,
        agent: false,
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) req.destroy(new HttpsFailure(`the answer is larger than ${options.maxBytes} bytes`));
          else chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof HttpsFailure) return reject(error);
      const code = error.code ?? error.name;
      if (code === 'EPRIVATE') return reject(new HttpsFailure(`${url.hostname} resolves to a private address`));
      if (code === 'ABORT_ERR' || code === 'AbortError' || code === 'TimeoutError') return reject(new HttpsFailure(`no answer within ${options.timeoutMs / 1000} s`));
      if (CERTIFICATE_ERRORS.test(code)) return reject(new HttpsFailure(`its certificate is not valid for ${url.hostname} (${code})`, true));
      reject(new HttpsFailure(`${url.hostname}: ${code}`));
    });
    req.end(options.body);
  });
}
