import { parseArgs } from 'node:util';
import { buildApp, type App } from './app.ts';
import { ConfigError, readConfig, type Role } from './config.ts';
import { closeContext, createContext } from './context.ts';
import { seedApiKey } from './domain/api-keys.ts';
import { Runner } from './workers/runner.ts';
import { tasks } from './workers/tasks.ts';

// Process entry: config -> db -> migrate -> context -> http and/or worker; SIGTERM and SIGINT drain.

function readRole(): Role {
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
  if (values.role === 'all' || values.role === 'api' || values.role === 'worker') return values.role;
  throw new ConfigError(`Invalid --role: expected all, api or worker, got "${values.role}"`);
}

async function main(): Promise<void> {
  let role: Role;
  let config;
  let ctx;
  try {
    role = readRole();
    config = readConfig();
    ctx = await createContext(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`mailroom: ${error.message}`);
    process.exit(1);
  }
  let app: App | undefined;
  let runner: Runner | undefined;

  if (role !== 'worker') {
    const token = await seedApiKey(ctx);
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
    const modes = {
      capture: 'capture mode: mail is stored, not sent',
      relay: `relaying through ${config.smtpUrl ? new URL(config.smtpUrl).host : ''}`,
      direct: `direct delivery to recipients' mail servers as ${config.mailHostname}`,
    };
    const mode = modes[config.deliveryMode];
    console.log(`Mailroom is listening on ${config.publicUrl} (${mode})`);
    if (token) console.log(`Created a full-access API key; it is shown only this once:\n\n  ${token}\n`);
  }
  if (role !== 'api') {
    runner = new Runner(ctx, tasks);
    runner.start();
    if (role === 'worker') console.log('Mailroom worker is running');
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    await app?.close();
    await runner?.stop(config.worker.shutdownTimeoutMs);
    await closeContext(ctx);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

await main();
