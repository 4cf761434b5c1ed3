import type { AddressInfo } from 'node:net';
import type { SMTPServer, SMTPServerOptions } from 'smtp-server';
import type { Context } from '../context.ts';
import { AppError } from '../errors.ts';
import { faultError } from '../store/availability.ts';
import { smtpError } from './connection-limit.ts';

// What every Mailroom SMTP server shares: its limits, how it answers our own failures, and how it
// starts and stops (how it reads a message: data-reader.ts).

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

/** Logs a connection's error as `what`'s (a client gone mid-command: the server goes on). */
export const logConnectionErrors = (ctx: Context, what: string) => (error: Error) => ctx.log.warn({ err: error }, `${what} connection error`);

/**
 * Starts `server` on host:port; resolves once it listens. A failure to listen (a port in use) only
 * rejects, to be said in one line (start-errors.ts); connections' errors go to `onConnectionError` after.
 */
export function listen(server: SMTPServer, port: number, host: string, onConnectionError?: (error: Error) => void): Promise<SmtpListener> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      if (onConnectionError) server.on('error', onConnectionError);
      resolve({
        address: () => server.server.address() as AddressInfo,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
