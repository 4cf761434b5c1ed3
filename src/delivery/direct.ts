import type { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
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
import type { StsPolicies } from './mta-sts.ts';
import { hostKey, mxMatches, type StsPolicy } from './mta-sts-policy.ts';
import type { RecordTlsSession, TlsSession } from './tls-results.ts';

// Direct delivery: Mailroom is the sending MTA. Recipients are grouped by domain, each domain's mail
// servers are found in DNS, and each group goes over one SMTP transaction to the first server that
// answers. Connections to one server are pooled and capped; the messages to one destination (the
// domain's most preferred MX host) are throttled, slowed when it pushes back, and paused while none of
// its servers can be reached. A domain's MTA-STS policy (mta-sts.ts) decides which servers may have its
// mail and how, and each session under it is counted for the TLS report the domain asks for.

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
  mtaSts?: { policies: StsPolicies; record: RecordTlsSession },
): { send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult>; close(): void } {
  const pools = new Map<string, { transport: SmtpSender & { close(): void }; usedAt: number }>();
  const breakers = new Map<string, Breaker>();
  let sweptAt = clock.now();
  const ca = config.outboundCaFile ? readFileSync(config.outboundCaFile, 'utf8') : undefined;
  const record: RecordTlsSession = mtaSts?.record ?? (() => {});

  /** The breaker of a destination; one not paused is forgotten with the idle pools. */
  function breakerOf(destination: string): Breaker {
    let breaker = breakers.get(destination);
    if (!breaker) breakers.set(destination, (breaker = createBreaker(destination, clock, (message) => log.info(message))));
    return breaker;
  }

  // One pool per server address (and TLS policy), whichever domains' MX records name it, so the cap
  // holds per destination server. STARTTLS whenever offered; `enforced` refuses to go on without it.
  // Certificates are not checked (many MX certificates would fail, and SMTP between servers offers
  // encryption without authentication), except under an MTA-STS policy: `verified` requires TLS and a
  // certificate valid for the MX host's name, so its pools are per host name too.
  function poolFor(address: string, host: string, tls: 'opportunistic' | 'enforced' | 'verified'): SmtpSender {
    const key = tls === 'verified' ? `${address}|${tls}|${hostKey(host)}` : `${address}|${tls}`;
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
      const servername = isIP(host) ? {} : { servername: hostKey(host) };
      const transport = nodemailer.createTransport({
        pool: true,
        host: address,
        port: config.direct.port,
        name: config.mailHostname,
        maxConnections: config.direct.maxConnections,
        maxMessages: Infinity,
        requireTLS: tls !== 'opportunistic',
        opportunisticTLS: tls === 'opportunistic',
        tls: tls === 'verified' ? { rejectUnauthorized: true, ...servername, ...(ca ? { ca: [...rootCertificates, ca] } : {}) } : { rejectUnauthorized: false, ...servername },
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
   * (the last server's) when none took it. Under an MTA-STS policy a host it names is tried with a
   * checked certificate, and each session counts for TLS reports; `enforce` tries only those hosts,
   * that way only, and defers the message when none works; `testing` goes on as without a policy.
   */
  async function firstServer(hosts: string[], destination: string, domain: string, to: string[], message: OutgoingMessage, from: string, signal: AbortSignal, policy: StsPolicy | undefined): Promise<SendResult> {
    const enforce = policy?.mode === 'enforce';
    const failures: string[] = [];
    const failed = (host: string, address: string, type: TlsSession['result'], reason: string) => {
      record({ domain, result: type, mxHost: hostKey(host), receivingIp: address, reason });
      failures.push(`${hostKey(host)}${address ? ` (${address})` : ''}: ${type} (${reason})`);
    };
    let last: DeliveryError | undefined;
    for (const host of hosts) {
      const named = policy !== undefined && mxMatches(policy.mx, host);
      if (policy && !named) {
        failed(host, '', 'validation-failure', 'the MX host is not named by the policy');
        if (enforce) continue;
      }
      for (const address of await addressesOf(resolver, host)) {
        try {
          if (named) {
            try {
              const result = await sendVia(poolFor(address, host, 'verified'), { from, to }, message.raw, signal);
              record({ domain, result: 'success', mxHost: '', receivingIp: '', reason: '' });
              if (pushedBack(result)) throttle?.slowDown(destination);
              return result;
            } catch (error) {
              if (!(error instanceof DeliveryError) || !error.tls) throw error;
              failed(host, address, error.tls.type, error.tls.reason);
              if (enforce) throw error;
            }
          }
          const result = await sendVia(poolFor(address, host, message.domain?.tls === 'enforced' ? 'enforced' : 'opportunistic'), { from, to }, message.raw, signal);
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
    if (enforce && failures.length > 0) {
      const rest = last && !last.tls ? `; ${last.response}` : '';
      throw new DeliveryError(`Deferred by the MTA-STS policy of ${domain} (mode enforce: TLS with a certificate valid for an MX host it names: ${policy.mx.join(', ')}): ${failures.join('; ')}${rest}`, undefined);
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
      const sts = await mtaSts?.policies.policyOf(domain);
      // A domain that publishes a policy none can be had of now is sent to as without one (RFC 8461 5.1), and reported.
      if (sts && 'failure' in sts) record({ domain, result: sts.failure, mxHost: '', receivingIp: '', reason: sts.detail });
      const policy = sts && 'policy' in sts ? sts.policy : undefined;
      return await guarded(breakerOf(destination), to, () => firstServer(found.hosts, destination, domain, to, message, from, signal, policy));
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
