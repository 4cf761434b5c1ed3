import type { Resolver } from 'node:dns/promises';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from './time/clock.ts';
import type { Config } from './config.ts';
import { resolveSecret } from './secrets/secret.ts';
import { createSemaphore, type Semaphore } from './limits/semaphore.ts';
import { createApiKeyCache, type ApiKeyCache } from './domain/api-keys/api-key-cache.ts';
import { createDomainCache, type DomainCache } from './domain/sending-domains/domain-cache.ts';
import { createProjectCache, type ProjectCache } from './domain/projects/project-cache.ts';
import { createAdminKeyCache, type AdminKeyCache } from './domain/projects/admin-key-cache.ts';
import { createWebhookCache, type WebhookCache } from './domain/webhooks/webhook-cache.ts';
import { createIdempotencyState, type IdempotencyState } from './domain/emails/idempotency.ts';
import { createKeyUsage, type KeyUsage } from './domain/api-keys/key-usage.ts';
import { createRateBudget, type RateBudget } from './domain/api-keys/rate-limits.ts';
import { createComposer, type Composer } from './domain/messages/compose-pool.ts';
import { createMessageReader, type MessageReader } from './domain/receiving/message-reader.ts';
import { createTransport, relayTransport, type Transport } from './delivery/transports.ts';
import { createThrottle, type ThrottleShares } from './delivery/throttle.ts';
import { createProjectRelays, type ProjectRelays } from './domain/projects/project-relays.ts';
import { createStsPolicies, type StsCache } from './delivery/mta-sts.ts';
import { createTlsSessionCounts, type TlsSessionCounts } from './domain/tls-reports/session-counts.ts';
import { findStsPolicy, saveStsPolicy } from './store/mta-sts-policies.ts';
import { createResolver } from './dns.ts';
import { availabilityProbe, openDb, type Db } from './store/db.ts';
import { createAvailability, type Availability } from './store/availability.ts';
import { createDeliveryLog, type DeliveryLog } from './monitoring/delivery-log.ts';
import { createInstruments, type Instruments } from './monitoring/instruments.ts';
import { migrate } from './store/migrations/index.ts';
import { createWriter, type Writer } from './store/writer.ts';
import { createJobNotices, type JobNotices } from './store/job-notices.ts';
import { sharedWindows } from './store/rate-limit-windows.ts';
import { sharedSlowdowns } from './store/throttle-slowdowns.ts';

/** The composition root: everything a request or a job needs, passed explicitly. */
export interface Context {
  readonly config: Config;
  /** MAILROOM_SECRET, or the one created for a SQLite install (secret.ts). */
  readonly secret: string;
  readonly db: Db;
  /** Whether the database works now: every failed query reports here, and health, metrics and workers read it. */
  readonly availability: Availability;
  /** Every write transaction goes through here (group commit on SQLite). */
  readonly writer: Writer;
  readonly clock: Clock;
  readonly log: Logger;
  readonly keyUsage: KeyUsage;
  /** API keys by token hash, as authentication reads them. */
  readonly apiKeys: ApiKeyCache;
  /** The admin keys of admin_keys, as authentication reads them (MAILROOM_ADMIN_KEY is the config's). */
  readonly adminKeys: AdminKeyCache;
  /** Each key's requests a second, one budget for the process: HTTP requests and SMTP submissions count alike. */
  readonly rates: RateBudget;
  /** Projects by id, as rate limits, quotas and relays read them. */
  readonly projects: ProjectCache;
  /** Sending domains by name, as sending reads them. */
  readonly domains: DomainCache;
  /** Webhook endpoints, as events and deliveries read them. */
  readonly webhooks: WebhookCache;
  readonly idempotency: IdempotencyState;
  /** The install's transport (DELIVERY_MODE). */
  readonly transport: Transport;
  /** Each project's own relay, for the projects that have one (`smtp_url`). */
  readonly relays: ProjectRelays;
  /** The one DNS resolver (DNS_SERVERS): domain verification and MX lookups. */
  readonly dns: Resolver;
  /** Signs outgoing mail with its domain's DKIM key, parsed once per domain. */
  readonly composer: Composer;
  /** Parses and authenticates received mail (a large message on a thread). */
  readonly reader: MessageReader;
  /** Jobs were committed in this process: an in-process worker should look now, not at its next poll. */
  readonly jobsAdded: JobSignal;
  /** On PostgreSQL, jobs committed by any process: every worker hears of them (LISTEN/NOTIFY). */
  readonly jobNotices: JobNotices;
  /**
   * Turns to compose and send an email with large attachments: each costs several times its size in
   * memory while it is composed and sent, so only WORKER_MAX_LARGE_MESSAGES do at once.
   */
  readonly largeMessages: Semaphore;
  /** Each delivery attempt at debug, and their summary at info every ten seconds. */
  readonly deliveryLog: DeliveryLog;
  /** What GET /metrics tells Prometheus. */
  readonly instruments: Instruments;
  /** TLS sessions in direct mode, counted for the daily TLS reports. */
  readonly tlsSessions: TlsSessionCounts;
}

export interface JobSignal {
  notify(): void;
  subscribe(listener: () => void): () => void;
}

function createJobSignal(): JobSignal {
  const listeners = new Set<() => void>();
  return {
    notify: () => listeners.forEach((listener) => listener()),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** Opens and migrates the database and wires the context. */
export async function createContext(config: Config, options: { clock?: Clock; log?: Logger } = {}): Promise<Context> {
  const log = options.log ?? pino({ level: config.logLevel });
  const clock = options.clock ?? systemClock;
  const secret = resolveSecret(config);
  const availability = createAvailability(log, () => clock.now());
  const db = openDb(config.databaseUrl, availability);
  availability.setProbe(availabilityProbe(db));
  await migrate(db);
  const jobsAdded = createJobSignal();
  const writer = createWriter(db, config.databaseUrl, availability, () => jobsAdded.notify());
  const jobNotices = createJobNotices(db, config.databaseUrl, log, availability);
  jobsAdded.subscribe(() => jobNotices.announce());
  const dns = createResolver(config.dnsServers);
  const tlsSessions = createTlsSessionCounts(config.tlsRpt.enabled, writer, clock, log);
  const stsCache: StsCache = {
    find: (domain) => findStsPolicy(db, domain),
    save: (domain, policy, expiresAt) => writer.transaction((tx) => saveStsPolicy(tx, domain, policy, clock.now(), expiresAt)),
  };
  const shares: ThrottleShares = { windows: sharedWindows(db, 'throttle_windows'), slowdowns: sharedSlowdowns(db), log };
  const transport = createTransport(config, clock, dns, shares, log, {
    policies: createStsPolicies(config, dns, clock, stsCache, log),
    record: (session) => tlsSessions.record(session),
  });
  const projects = createProjectCache(db);
  return {
    config,
    secret,
    db,
    availability,
    writer,
    clock,
    log,
    keyUsage: createKeyUsage(writer, clock, log),
    apiKeys: createApiKeyCache(db),
    adminKeys: createAdminKeyCache(db),
    rates: createRateBudget(clock, sharedWindows(db)),
    projects,
    domains: createDomainCache(db),
    webhooks: createWebhookCache(db),
    idempotency: createIdempotencyState(),
    transport,
    relays: createProjectRelays(projects, transport, secret, (smtpUrl) => relayTransport(smtpUrl, createThrottle(config.throttle, clock, shares), clock, log), log),
    dns,
    composer: createComposer(config.worker.composeThreads, secret),
    reader: createMessageReader(config),
    jobsAdded,
    jobNotices,
    largeMessages: createSemaphore(config.worker.maxLargeMessages),
    deliveryLog: createDeliveryLog(log),
    instruments: createInstruments(db, clock, availability),
    tlsSessions,
  };
}

/** Flushes what is buffered and closes every resource the context holds. */
export async function closeContext(ctx: Context): Promise<void> {
  ctx.deliveryLog.close();
  await ctx.keyUsage.close();
  ctx.transport.close();
  ctx.relays.close();
  await ctx.tlsSessions.close();
  await ctx.composer.close();
  await ctx.reader.close();
  await ctx.jobNotices.close();
  await ctx.writer.close();
  ctx.availability.close();
  await ctx.db.destroy();
}
