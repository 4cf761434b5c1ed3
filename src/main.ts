import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp, type App } from './app.ts';
import { announce } from './banner.ts';
import { ConfigError, readConfig, readRole, type Config, type Role } from './config.ts';
import { closeContext, createContext, type Context } from './context.ts';
import { createFirstKey, seedConfiguredKey } from './domain/api-keys/api-keys.ts';
import { processLog } from './log-output.ts';
import { scheduleRetention } from './domain/retention/retention.ts';
import { scheduleDeliverabilityChecks } from './domain/deliverability/daily-checks.ts';
import { scheduleTlsReports } from './domain/tls-reports/send-reports.ts';
import { listenErrorLine, reachPostgres, sqliteErrorLine } from './start-errors.ts';
import { listenSmtpHealth } from './smtp/health.ts';
import { listenInbound } from './smtp/inbound-server.ts';
import { submissionServer } from './smtp/submission-server.ts';
import type { SmtpListener } from './smtp/smtp-listener.ts';
import { smtpTlsPair } from './smtp/tls.ts';
import { isPostgresUrl } from './store/db.ts';
import { listenWorkerHealth } from './monitoring/worker-health.ts';
import { startMetricsFolding } from './domain/metrics/folding.ts';
import { Runner } from './jobs/runner.ts';
import { tasks } from './workers/tasks.ts';

// Process entry: role and config -> db -> migrate -> context -> the configured key -> listeners -> worker
// -> a first key, once listening -> banner -> requests served. SIGTERM and SIGINT drain. What the
// environment gets wrong stops start-up with one line on stderr (start-errors.ts).

/** Shows the log lines held back at a terminal (log-output.ts). */
let releaseLogs = () => {};

/** Ends start-up with one line naming the cause, or rethrows what is not a known cause (a bug). */
function stop(error: unknown, line: string | undefined): never {
  if (line === undefined) throw error;
  releaseLogs();
  console.error(`mailroom: ${line}`);
  process.exit(1);
}

/**
 * Requests wait until the banner is out: a script that waits for /health and then reads the key finds
 * it printed. The port is taken first, so that a start that fails on it creates no key.
 */
function holdRequests(app: App): () => void {
  let open = false;
  let release = () => {};
  const opened = new Promise<void>((resolve) => (release = resolve));
  app.addHook('onRequest', (_request, _reply, done) => (open ? done() : void opened.then(() => done())));
  return () => {
    open = true;
    release();
  };
}

const hostPort = (address: AddressInfo) => `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

async function main(): Promise<void> {
  let role: Role;
  let config: Config | undefined;
  let ctx: Context;
  try {
    role = readRole(process.argv.slice(2));
    config = readConfig();
    const output = processLog(config.logLevel);
    releaseLogs = output.release;
    const { inbound, submission } = config;
    if (role.has('smtp') && role.size === 1 && [inbound.port, submission.port, submission.tlsPort].every((p) => p === undefined)) {
      throw new ConfigError('--role smtp runs the SMTP listeners: set INBOUND_SMTP_PORT, SUBMISSION_PORT or SUBMISSION_TLS_PORT');
    }
    // Without a secret, createContext refuses PostgreSQL before connecting (secret.ts).
    if (isPostgresUrl(config.databaseUrl) && config.secret !== undefined) await reachPostgres(config.databaseUrl);
    ctx = await createContext(config, { log: output.log });
  } catch (error) {
    stop(error, error instanceof ConfigError ? error.message : config && sqliteErrorLine(error, config.databaseUrl));
  }
  const { port, host, worker } = config;
  let app: App | undefined;
  let listen: string | undefined;
  let serve = () => {};
  if (role.has('api')) {
    app = await buildApp(ctx);
    serve = holdRequests(app);
    await seedConfiguredKey(ctx);
    await app.listen({ port, host }).catch((error: unknown) => stop(error, listenErrorLine(error, 'PORT', host, port)));
    listen = hostPort(app.server.address() as AddressInfo);
  }
  let inbound: SmtpListener | undefined;
  const submission: { starttls?: SmtpListener; implicit?: SmtpListener } = {};
  let selfSigned = false;
  let smtpHealth: Server | undefined;
  const { inbound: inboundConfig, submission: submissionConfig } = config;
  const submits = submissionConfig.port !== undefined || submissionConfig.tlsPort !== undefined;
  if (role.has('smtp') && (inboundConfig.port !== undefined || submits)) {
    const tls = await smtpTlsPair(ctx).catch((error: unknown) => stop(error, error instanceof ConfigError ? error.message : undefined));
    selfSigned = tls.selfSigned;
    if (inboundConfig.port !== undefined) {
      const { port: smtpPort, host: smtpHost } = inboundConfig;
      inbound = await listenInbound(ctx, tls).catch((error: unknown) => stop(error, listenErrorLine(error, 'INBOUND_SMTP_PORT', smtpHost, smtpPort)));
    }
    const server = submissionServer(ctx, tls);
    const listenOn = (port: number, secure: boolean, variable: string) =>
      server.listen(port, secure).catch((error: unknown) => stop(error, listenErrorLine(error, variable, submissionConfig.host, port)));
    if (submissionConfig.port !== undefined) submission.starttls = await listenOn(submissionConfig.port, false, 'SUBMISSION_PORT');
    if (submissionConfig.tlsPort !== undefined) submission.implicit = await listenOn(submissionConfig.tlsPort, true, 'SUBMISSION_TLS_PORT');
    const { smtpHealthPort } = config;
    if (smtpHealthPort !== undefined) {
      smtpHealth = await listenSmtpHealth(ctx, smtpHealthPort, host).catch((error: unknown) =>
        stop(error, listenErrorLine(error, 'SMTP_HEALTH_PORT', host, smtpHealthPort)),
      );
    }
  }
  const runner = role.has('worker') ? new Runner(ctx, tasks) : undefined;
  let health: Server | undefined;
  if (runner && worker.healthPort !== undefined) {
    const healthPort = worker.healthPort;
    health = await listenWorkerHealth(ctx, runner, healthPort, host).catch((error: unknown) =>
      stop(error, listenErrorLine(error, 'WORKER_HEALTH_PORT', host, healthPort)),
    );
  }
  // Every worker adds the retention, deliverability and TLS report jobs if they are missing; their unique keys keep them to one.
  if (runner) {
    await scheduleRetention(ctx);
    await scheduleDeliverabilityChecks(ctx);
    await scheduleTlsReports(ctx);
  }
  runner?.start();
  const folding = runner && startMetricsFolding(ctx);
  const token = app ? await createFirstKey(ctx) : undefined;
  // Before the banner: whoever reads the key from it and then sends SIGTERM finds the drain in place.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    await Promise.all([app?.close(), inbound?.close(), submission.starttls?.close(), submission.implicit?.close()]);
    health?.close();
    health?.closeAllConnections();
    smtpHealth?.close();
    smtpHealth?.closeAllConnections();
    await runner?.stop(worker.shutdownTimeoutMs);
    await folding?.stop();
    await closeContext(ctx);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  announce(ctx, {
    role,
    listen,
    inbound: inbound && hostPort(inbound.address()),
    submission: submits
      ? { starttls: submission.starttls && hostPort(submission.starttls.address()), implicit: submission.implicit && hostPort(submission.implicit.address()) }
      : undefined,
    selfSigned,
    health: health && hostPort(health.address() as AddressInfo),
    smtpHealth: smtpHealth && hostPort(smtpHealth.address() as AddressInfo),
    token,
  });
  releaseLogs();
  serve();
}

await main();
