import type { Resolver } from 'node:dns/promises';
import nodemailer from 'nodemailer';
import { toTimestamp, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import type { DomainRow } from '../store/domains.ts';
import { saveCapturedMessage } from '../store/emails.ts';
import { directTransport } from './direct.ts';
import { resultForAll, SMTP_TIMEOUTS, sendVia, type SendResult } from './smtp-send.ts';

export interface OutgoingMessage {
  emailId: string;
  from: string;
  to: string[];
  raw: Buffer;
  /** The sender's Mailroom domain, when `from` is on one: direct delivery takes its return path and TLS policy. */
  domain?: Pick<DomainRow, 'name' | 'custom_return_path' | 'tls'>;
}

export interface Transport {
  readonly kind: 'capture' | 'relay' | 'direct';
  send(message: OutgoingMessage): Promise<SendResult>;
  close(): void;
}

/** Nothing leaves the machine: the raw message is stored, and every recipient counts as accepted. */
function captureTransport(db: Db, clock: Clock): Transport {
  return {
    kind: 'capture',
    async send(message) {
      await saveCapturedMessage(db, message.emailId, message.raw, toTimestamp(clock.now()));
      return resultForAll(message.to, { accepted: true, code: undefined, response: '250 2.0.0 Captured by Mailroom (capture mode)' });
    },
    close() {},
  };
}

// Pooled connections by default; any of nodemailer's SMTP options can be set in SMTP_URL's query
// (`?maxConnections=20&tls.rejectUnauthorized=false`). The timeouts stay below the worker's lock
// timeout, so a hung relay frees its job for a retry.
const RELAY_DEFAULTS = {
  pool: 'true',
  maxConnections: '10',
  maxMessages: 'Infinity',
  ...Object.fromEntries(Object.entries(SMTP_TIMEOUTS).map(([name, ms]) => [name, String(ms)])),
};

/** Everything goes through one SMTP relay (SMTP_URL); STARTTLS is used whenever the relay offers it. */
function relayTransport(smtpUrl: string): Transport {
  const url = new URL(smtpUrl);
  for (const [name, value] of Object.entries(RELAY_DEFAULTS)) {
    if (!url.searchParams.has(name)) url.searchParams.set(name, value);
  }
  const pool = nodemailer.createTransport(url.toString());
  return {
    kind: 'relay',
    send: (message) => sendVia(pool, { from: message.from, to: message.to }, message.raw),
    close: () => pool.close(),
  };
}

/** The transport of DELIVERY_MODE: capture (the default without SMTP_URL, so a new install never sends by accident), relay or direct. */
export function createTransport(config: Config, db: Db, clock: Clock, resolver: Resolver): Transport {
  switch (config.deliveryMode) {
    case 'relay':
      return relayTransport(config.smtpUrl!);
    case 'direct':
      return directTransport(config, resolver, clock);
    case 'capture':
      return captureTransport(db, clock);
  }
}
