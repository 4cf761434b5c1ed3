import { buildApp, type App } from './app.ts';
import { ConfigError, readConfig, readRole, type Config, type Role } from './config.ts';
import { closeContext, createContext, type Context } from './context.ts';
import { seedApiKey } from './domain/api-keys.ts';
import { listenErrorLine, reachPostgres, sqliteErrorLine } from './start-errors.ts';
import { isPostgresUrl } from './store/db.ts';
import { Runner } from './workers/runner.ts';
import { tasks } from './workers/tasks.ts';

// Process entry: role and config -> db -> migrate -> context -> listeners -> worker -> the key, once
// listening -> banner. SIGTERM and SIGINT drain. What the environment gets wrong stops start-up with
// one line on stderr (start-errors.ts).

/** Ends start-up with one line naming the cause, or rethrows what is not a known cause (a bug). */
function stop(error: unknown, line: string | undefined): never {
  if (line === undefined) throw error;
  console.error(`mailroom: ${line}`);
  process.exit(1);
}

async function main(): Promise<void> {
  let role: Role;
  let config: Config | undefined;
  let ctx: Context;
  try {
    role = readRole(process.argv.slice(2));
    config = readConfig();
    // Without a secret, createContext refuses PostgreSQL before connecting (secret.ts).
    if (isPostgresUrl(config.databaseUrl) && config.secret !== undefined) await reachPostgres(config.databaseUrl);
    ctx = await createContext(config);
  } catch (error) {
    stop(error, error instanceof ConfigError ? error.message : config && sqliteErrorLine(error, config.databaseUrl));
  }
  const { port, host, worker } = config;
  let app: App | undefined;
  if (role !== 'worker') {
    app = await buildApp(ctx);
    await app.listen({ port, host }).catch((error: unknown) => stop(error, listenErrorLine(error, 'PORT', host, port)));
  }
  const runner = role === 'api' ? undefined : new Runner(ctx, tasks);
  runner?.start();
  // Only now that it can be used: a start that failed earlier (a port in use) leaves no key unseen.
  const token = app ? await seedApiKey(ctx) : undefined;
  if (app) {
    const modes = {
      capture: 'capture mode: mail is stored, not sent',
      relay: `relaying through ${config.smtpUrl ? new URL(config.smtpUrl).host : ''}`,
      direct: `direct delivery to recipients' mail servers as ${config.mailHostname}`,
    };
    console.log(`Mailroom is listening on ${config.publicUrl} (${modes[config.deliveryMode]})`);
    if (token) console.log(`Created a full-access API key; it is shown only this once:\n\n  ${token}\n`);
  }
  if (role === 'worker') console.log('Mailroom worker is running');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    await app?.close();
    await runner?.stop(worker.shutdownTimeoutMs);
    await closeContext(ctx);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

await main();
