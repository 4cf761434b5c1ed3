import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Clock } from '../time/clock.ts';
import type { Config } from '../config.ts';
import { isAbsent } from '../dns.ts';
import { createBreaker, guarded, type Breaker } from './breaker.ts';
import { pushesBack } from './smtp-reply.ts';
import { throttledAll, type Throttle } from './throttle.ts';
import { byDomain, DeliveryError, refusedAll, resultForAll, SMTP_TIMEOUTS, sendVia, type SendResult, type SmtpSender } from './smtp-send.ts';
import type { OutgoingMessage } from './transports.ts';

// Direct delivery: Mailroom is the sending MTA. Recipients are grouped by domain, each domain's mail
// servers are found in DNS, and each group goes over one SMTP transaction to the first server that
// answers. Connections to one server are pooled and capped; the messages to one destination (the
// domain's most preferred MX host) are throttled, slowed when it pushes back, and paused while none of
// its servers can be reached.

/** A pool unused this long is dropped, so destinations seen once hold no memory (its idle sockets close sooner). */
const IDLE_POOL_MS = 5 * 60_000;

type Hosts = { hosts: string[] } | { refused: { code: number; response: string } };

/** MX hosts by preference; the domain itself without MX (RFC 5321 5.1); a null MX (RFC 7505) refuses mail. */
async function mailHosts(resolver: Resolver, domain: string): Promise<Hosts> {
  try {
    const mx = (await resolver.resolveMx(domain)).sort((a, b) => a.priority - b.priority);
    if (mx.length === 1 && (mx[0]!.exchange === '' || mx[0]!.exchange === '.')) {
      return { refused: { code: 556, response: `556 5.1.10 ${domain} accepts no mail (null MX)` } };
    }
    return { hosts: mx.map((record) => record.exchange) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENODATA') return { hosts: [domain] };
    if (code === 'ENOTFOUND') return { refused: { code: 550, response: `550 5.1.2 The domain ${domain} does not exist` } };
    throw new DeliveryError(`DNS lookup of the MX of ${domain} failed (${code})`, undefined);
  }
}

async function addressesOf(resolver: Resolver, host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  const lookup = (query: Promise<string[]>) => query.catch((error: Error) => (isAbsent(error) ? [] : Promise.reject(error)));
  const [v4, v6] = await Promise.allSettled([lookup(resolver.resolve4(host)), lookup(resolver.resolve6(host))]);
  return [v4, v6].flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
}


/** Whether any answer in `result` (the message's, or a recipient's) asks us to slow down. */
const pushedBack = (result: SendResult) => result.recipients.some((r) => !r.accepted && pushesBack(r));

/**
 * Sends to recipients' own mail servers on DIRECT_SMTP_PORT, at most DIRECT_MAX_CONNECTIONS per
 * server, at the rate `throttle` allows each destination.
 */
export function directTransport(
  config: Config,
  resolver: Resolver,
  clock: Clock,
  throttle: Throttle | undefined,
  log: Logger,
): { send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult>; close(): void } {
  const pools = new Map<string, { transport: SmtpSender & { close(): void }; usedAt: number }>();
  const breakers = new Map<string, Breaker>();
  let sweptAt = clock.now();

  /** The breaker of a destination; one not paused is forgotten with the idle pools. */
  function breakerOf(destination: string): Breaker {
    let breaker = breakers.get(destination);
    if (!breaker) breakers.set(destination, (breaker = createBreaker(destination, clock, (message) => log.info(message))));
    return breaker;
  }

  // One pool per server address (and TLS policy), whichever domains' MX records name it, so the cap
  // holds per destination server. STARTTLS whenever offered; `enforced` refuses to go on without it.
  // Certificates are not checked: many MX certificates would fail, and SMTP between servers offers
  // encryption without authentication (the server name is still sent, for servers with several).
  function poolFor(address: string, host: string, enforced: boolean): SmtpSender {
    const key = `${address}|${enforced}`;
    const now = clock.now();
    if (now - sweptAt > IDLE_POOL_MS) {
      sweptAt = now;
      for (const [other, pool] of pools) {
        if (now - pool.usedAt > IDLE_POOL_MS) {
          pool.transport.close();
          pools.delete(other);
        }
      }
      for (const [destination, breaker] of breakers) if (!breaker.paused) breakers.delete(destination);
    }
    let pool = pools.get(key);
    if (!pool) {
      const transport = nodemailer.createTransport({
        pool: true,
        host: address,
        port: config.direct.port,
        name: config.mailHostname,
        maxConnections: config.direct.maxConnections,
        maxMessages: Infinity,
        requireTLS: enforced,
        opportunisticTLS: !enforced,
        tls: { rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) },
        ...SMTP_TIMEOUTS,
      });
      pool = { transport, usedAt: now };
      pools.set(key, pool);
    }
    pool.usedAt = now;
    return pool.transport;
  }

  /**
   * The transaction on the first of `hosts`' servers that answers it; 5xx ends it. A DeliveryError
   * (the last server's) when none took it.
   */
  async function firstServer(hosts: string[], destination: string, to: string[], message: OutgoingMessage, from: string, signal: AbortSignal): Promise<SendResult> {
    let last: DeliveryError | undefined;
    for (const host of hosts) {
      for (const address of await addressesOf(resolver, host)) {
        try {
          const result = await sendVia(poolFor(address, host, message.domain?.tls === 'enforced'), { from, to }, message.raw, signal);
          if (pushedBack(result)) throttle?.slowDown(destination);
          return result;
        } catch (error) {
          if (!(error instanceof DeliveryError)) throw error;
          if (pushesBack(error)) throttle?.slowDown(destination);
          if (error.permanent) return refusedAll(to, error);
          last = error;
        }
      }
    }
    throw last ?? new DeliveryError(`No address of a mail server of ${destination} could be found`, undefined);
  }

  /** One destination domain: its MX hosts, its budget, and its servers, unless they are paused (breaker.ts). */
  async function sendToDomain(domain: string, to: string[], message: OutgoingMessage, from: string, signal: AbortSignal): Promise<SendResult> {
    try {
      const found = await mailHosts(resolver, domain);
      if ('refused' in found) return resultForAll(to, { ...found.refused, accepted: false, stage: 'rcpt' });
      // The destination is the servers of the most preferred MX host: domains that share it share its budget.
      const destination = found.hosts[0]!.toLowerCase().replace(/\.$/, '');
      const until = await throttle?.admit(destination, signal);
      if (until !== undefined) return throttledAll(to, destination, until);
      return await guarded(breakerOf(destination), to, () => firstServer(found.hosts, destination, to, message, from, signal));
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      return refusedAll(to, error);
    }
  }

  return {
    async send(message, signal) {
      const from = message.envelopeFrom;
      const groups = [...byDomain(message.to)];
      const results = await Promise.all(groups.map(([name, group]) => sendToDomain(name, group.to, message, from, signal)));
      const recipients: SendResult['recipients'] = [];
      groups.forEach(([, group], i) => group.positions.forEach((position, j) => (recipients[position] = results[i]!.recipients[j]!)));
      return { recipients, response: [...new Set(results.map((r) => r.response).filter(Boolean))].join(' | ') };
    },
    close() {
      for (const pool of pools.values()) pool.transport.close();
      pools.clear();
    },
  };
}
