import type { Resolver } from 'node:dns/promises';
import { setMaxListeners } from 'node:events';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Clock } from '../time/clock.ts';
import type { Config } from '../config.ts';
import type { DomainRow } from '../store/domains.ts';
import { createBreaker, guarded } from './breaker.ts';
import { directTransport } from './direct.ts';
import type { StsPolicies } from './mta-sts.ts';
import type { RecordTlsSession } from './tls-results.ts';
import { createThrottle, throttledAll, type Throttle, type ThrottleShares } from './throttle.ts';
import { byDomain, DeliveryError, refusedAll, resultForAll, SMTP_TIMEOUTS, sendVia, type SendResult } from './smtp-send.ts';

export interface OutgoingMessage {
  emailId: string;
  /** MAIL FROM: a recipient's VERP bounce address (domain/bounces/verp.ts), or the one sender of all (RELAY_ENVELOPE_SENDER). */
  envelopeFrom: string;
  to: string[];
  raw: Buffer;
  /** The sender's Mailroom domain, when `from` is on one: direct delivery takes its TLS policy. */
  domain?: Pick<DomainRow, 'name' | 'custom_return_path' | 'tls'>;
}

export interface Transport {
  readonly kind: 'capture' | 'relay' | 'direct';
  send(message: OutgoingMessage): Promise<SendResult>;
  /**
   * For a worker stopping at its timeout: cuts off the sends under way, closing their connections
   * before the server's answer (a message cut off before its end is discarded), and refuses new ones;
   * both fail with SendAborted at once. Returns how many were cut off.
   */
  abort(): number;
  /** Why all delivery is paused now (the relay cannot be reached or refuses us: breaker.ts), else undefined. */
  paused(): string | undefined;
  close(): void;
}

/** A send cut off, or refused, by Transport.abort(): there is no answer from the server to record. */
class SendAborted extends Error {
  constructor() {
    super('send cut off: the worker is stopping');
  }
}

/** What a transport does to send: the server's answer; when `signal` aborts, it stops as soon as it can. */
type Send = (message: OutgoingMessage, signal: AbortSignal) => Promise<SendResult>;

/** A transport whose sends abort() cuts off (see Transport.abort). */
function abortable(kind: Transport['kind'], send: Send, close: () => void, paused: () => string | undefined = () => undefined): Transport {
  const controller = new AbortController();
  const { signal } = controller;
  setMaxListeners(0, signal); // a few listeners per send under way, as many as WORKER_CONCURRENCY allows
  let underWay = 0;
  return {
    kind,
    async send(message) {
      if (signal.aborted) throw new SendAborted();
      underWay++;
      let cutOff = () => {};
      try {
        // Settles at the abort, not when `send` notices it (a send still looking up MX hosts would go
        // on for seconds); what `send` does after that is not this send's result.
        return await new Promise<SendResult>((resolve, reject) => {
          cutOff = () => reject(new SendAborted());
          signal.addEventListener('abort', cutOff, { once: true });
          send(message, signal).then(resolve, reject);
        });
      } finally {
        signal.removeEventListener('abort', cutOff);
        underWay--;
      }
    },
    abort() {
      const cut = underWay;
      controller.abort();
      return cut;
    },
    paused,
    close,
  };
}

/** Nothing leaves the machine: every recipient counts as accepted (the worker keeps the message, as in every mode). */
function captureTransport(): Transport {
  return abortable('capture', async (message) => resultForAll(message.to, { accepted: true, code: undefined, response: '250 2.0.0 Captured by Mailroom (capture mode)' }), () => {});
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

/**
 * Everything goes through one SMTP relay (SMTP_URL); STARTTLS is used whenever the relay offers it.
 * With DELIVERY_THROTTLE, the messages for a recipient domain are handed to the relay at its rate. The
 * relay's refusals are its own, not the destination's: they slow nothing down.
 */
export function relayTransport(smtpUrl: string, throttle: Throttle | undefined, clock: Clock, log: Logger): Transport {
  const url = new URL(smtpUrl);
  for (const [name, value] of Object.entries(RELAY_DEFAULTS)) {
    if (!url.searchParams.has(name)) url.searchParams.set(name, value);
  }
  const pool = nodemailer.createTransport(url.toString());
  // A relay that is down, or refuses our login or envelope sender, pauses all delivery at once
  // (breaker.ts): its messages wait for one to probe it.
  const breaker = createBreaker(`the relay ${url.host}`, clock, (message, paused) => (paused ? log.warn(message) : log.info(message)));
  const send: Send = (message, signal) => guarded(breaker, message.to, () => sendVia(pool, { from: message.envelopeFrom, to: message.to }, message.raw, signal));
  return abortable('relay', throttle ? throttled(throttle, send) : send, () => pool.close(), () => (breaker.paused ? breaker.reason : undefined));
}

/**
 * `send` at the rate of each recipient domain of the message: the recipients of a domain at its rate
 * go in one transaction, the others are held back until their domain has a slot.
 */
function throttled(throttle: Throttle, send: Send): Send {
  return async (message, signal) => {
    const recipients: SendResult['recipients'] = [];
    const admitted: number[] = [];
    for (const [domain, group] of byDomain(message.to)) {
      const until = await throttle.admit(domain, signal);
      if (until === undefined) admitted.push(...group.positions);
      else throttledAll(group.to, domain, until).recipients.forEach((held, i) => (recipients[group.positions[i]!] = held));
    }
    if (admitted.length === 0) return { recipients, response: recipients[0]!.response };
    const to = admitted.map((position) => message.to[position]!);
    const sent = await send({ ...message, to }, signal).catch((error: unknown) => {
      if (error instanceof DeliveryError && admitted.length < message.to.length) return refusedAll(to, error);
      throw error;
    });
    admitted.forEach((position, i) => (recipients[position] = sent.recipients[i]!));
    return { recipients, response: sent.response };
  };
}

/** The transport of DELIVERY_MODE: capture (the default without SMTP_URL, so a new install never sends by accident), relay or direct. */
export function createTransport(
  config: Config,
  clock: Clock,
  resolver: Resolver,
  shares: ThrottleShares,
  log: Logger,
  mtaSts?: { policies: StsPolicies; record: RecordTlsSession },
): Transport {
  switch (config.deliveryMode) {
    case 'relay':
      return relayTransport(config.smtpUrl!, createThrottle(config.throttle, clock, shares), clock, log);
    case 'direct': {
      const direct = directTransport(config, resolver, clock, createThrottle(config.throttle, clock, shares), log, mtaSts);
      return abortable('direct', direct.send, direct.close);
    }
    case 'capture':
      return captureTransport();
  }
}
