import http from 'node:http';
import https from 'node:https';
import { basename } from 'node:path';
import { AppError } from '../../errors.ts';
import { guardedLookup, isPrivateLiteral } from '../../net-guard.ts';

/** How long all the remote attachments of one email may take to fetch, together. */
export const REMOTE_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 3;

export interface FetchedFile {
  content: Buffer;
  filename: string | undefined;
}

// The message names the field, never the URL (it may carry credentials) nor the network's own words.
function attachmentError(field: string, why: string): AppError {
  return new AppError('invalid_attachment', `Could not fetch the attachment at \`${field}\`: ${why}`);
}

/** What went wrong with a connection, in general terms. */
function networkReason(code: string | undefined): string {
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name could not be resolved.';
  if (code === 'ECONNREFUSED') return 'the connection was refused.';
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return 'the TLS connection could not be established.';
  return 'the connection failed.';
}

function fileName(url: URL): string | undefined {
  try {
    return decodeURIComponent(basename(url.pathname)) || undefined;
  } catch {
    return undefined;
  }
}

function request(url: URL, allowPrivate: boolean, maxBytes: number, signal: AbortSignal) {
  return new Promise<{ status: number; location?: string; content: Buffer }>((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(url, { lookup: guardedLookup(allowPrivate), signal }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.resume();
        return resolve({ status, location: res.headers.location, content: Buffer.alloc(0) });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return req.destroy(Object.assign(new Error('too large'), { code: 'ETOOLARGE' }));
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status, content: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Fetches `attachments[].path` when an email is accepted: http(s) only, a timeout, a size cap, a few
 * redirects, and no private addresses unless MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS is set.
 */
export async function fetchRemoteFile(
  path: string,
  field: string,
  options: { allowPrivate: boolean; maxBytes: number; signal: AbortSignal },
): Promise<FetchedFile> {
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    throw attachmentError(field, 'the path is not a URL.');
  }
  const { signal } = options;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw attachmentError(field, 'only http and https URLs are fetched.');
    // An IP literal is connected to without a lookup, so it is checked here.
    if (!options.allowPrivate && isPrivateLiteral(url)) {
      throw attachmentError(field, 'private and loopback addresses are not fetched.');
    }
    let response;
    try {
      response = await request(url, options.allowPrivate, options.maxBytes, signal);
    } catch (error) {
      const code = (error as { code?: string; name?: string }).code ?? (error as Error).name;
      if (code === 'EPRIVATE') throw attachmentError(field, 'private and loopback addresses are not fetched.');
      if (code === 'ETOOLARGE') throw attachmentError(field, 'the file is larger than the 40 MB attachment limit.');
      if (code === 'ABORT_ERR' || code === 'AbortError' || code === 'TimeoutError') throw attachmentError(field, 'timed out.');
      throw attachmentError(field, networkReason(code));
    }
    if (response.location !== undefined) {
      url = new URL(response.location, url);
      continue;
    }
    if (response.status < 200 || response.status >= 300) throw attachmentError(field, `the server answered ${response.status}.`);
    return { content: response.content, filename: fileName(url) };
  }
  throw attachmentError(field, 'too many redirects.');
}
