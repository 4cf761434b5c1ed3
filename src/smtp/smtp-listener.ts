import type { AddressInfo } from 'node:net';
import type { SMTPServer, SMTPServerDataStream, SMTPServerOptions } from 'smtp-server';
import type { Context } from '../context.ts';
import { AppError } from '../errors.ts';
import { createSemaphore } from '../semaphore.ts';
import { faultError } from '../store/availability.ts';
import { smtpError } from './connection-limit.ts';

// What every Mailroom SMTP server shares: its limits, how it reads a message, how it answers our own
// failures, and how it starts and stops.

export interface SmtpListener {
  address(): AddressInfo;
  /** Stops taking connections and waits (up to a bound) for those open to finish. */
  close(): Promise<void>;
}

/** The options every server starts with: the idle limit per command, how long a stop waits, connections at once. */
export function baseOptions(name: string): SMTPServerOptions {
  return {
    name,
    banner: 'Mailroom',
    disableReverseLookup: true,
    maxClients: 500,
    socketTimeout: 60_000,
    closeTimeout: 10_000,
    logger: false,
  };
}

/** Messages over 1 MB read and stored at once: each costs a few times its size in memory until committed. */
const LARGE_BYTES = 1024 * 1024;
const MAX_LARGE_MESSAGES = 2;

/**
 * Reads DATA whole, or resolves undefined when it went over the size limit (read to the end all the
 * same). Past 1 MB, reading waits (the client with it: TCP pushes back) for one of a server's two
 * turns for large messages, held until `handle` is done with it.
 */
export function messageReader(): <T>(stream: SMTPServerDataStream, handle: (data: Buffer | undefined) => Promise<T>) => Promise<T> {
  const large = createSemaphore(MAX_LARGE_MESSAGES);
  return async (stream, handle) => {
    let [holding, done] = [false, false];
    // A turn granted after the message ended (the client left while it waited) is handed on at once.
    const whenLarge = async () => {
      await large.acquire();
      if (done) large.release();
      else holding = true;
    };
    try {
      return await handle(await readData(stream, whenLarge));
    } finally {
      done = true;
      if (holding) large.release();
    }
  };
}

function readData(stream: SMTPServerDataStream, whenLarge: () => Promise<void>): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      if (stream.sizeExceeded) return;
      chunks.push(chunk);
      if (bytes < LARGE_BYTES && (bytes += chunk.length) >= LARGE_BYTES) {
        stream.pause();
        whenLarge().then(() => stream.resume(), reject);
      }
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(stream.sizeExceeded ? undefined : Buffer.concat(chunks)));
  });
}

/**
 * A refusal passes as it is, a domain error as its SMTP reply, the database away or full as 451 4.3.0
 * or 452 4.3.1 (the sender retries; the outage is logged once, by store/availability.ts); anything else
 * is ours to log, and the client's to retry (451).
 */
export function asReply(ctx: Context, error: unknown, doing: string): Error {
  if ((error as { responseCode?: number }).responseCode) return error as Error;
  const appError = error instanceof AppError ? error : faultError(error);
  if (appError) {
    const { code, message } = appError.toSmtpReply();
    return smtpError(code, message);
  }
  ctx.log.error({ err: error }, `SMTP: failed ${doing}`);
  return smtpError(451, '4.3.0 Temporary failure, try again later');
}

/** Starts `server` on host:port; resolves once it listens. */
export function listen(server: SMTPServer, port: number, host: string): Promise<SmtpListener> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        address: () => server.server.address() as AddressInfo,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
