import { parseArgs } from 'node:util';
import { systemClock } from './time/clock.ts';
import { ConfigError, readConfig } from './config.ts';
import { createApiKey } from './domain/api-keys/api-keys.ts';
import { AppError } from './errors.ts';
import { listApiKeys } from './store/api-keys.ts';
import { isPostgresUrl, openDb, type Db } from './store/db.ts';
import { migrate } from './store/migrations/index.ts';
import { DEFAULT_PROJECT_ID } from './store/projects.ts';
import { reachPostgres, sqliteErrorLine } from './start-errors.ts';

// `npm run keys -- create --name ops`: a new API key on the database of DATABASE_URL (SQLite or
// PostgreSQL), printed once; the way back from a lost key without restarting. `npm run keys -- list`
// lists the keys. The token alone goes to stdout, so `npm run -s keys -- create --name ci > key` keeps it.

const USAGE = `usage: npm run keys -- create --name <name> [--permission full_access|sending_access]
       npm run keys -- list`;

function fail(line: string): never {
  process.stderr.write(`mailroom keys: ${line}\n`);
  process.exit(1);
}

async function create(db: Db, name: string | undefined, permission: string | undefined): Promise<void> {
  if (name === undefined) fail(`--name is required\n${USAGE}`);
  const { token } = await createApiKey({ db, clock: systemClock }, DEFAULT_PROJECT_ID, { name, permission });
  const kind = (permission ?? 'full_access') === 'full_access' ? 'full-access' : 'sending-access';
  process.stderr.write(`Created a ${kind} API key named "${name}"; it is shown only this once:\n`);
  process.stdout.write(`${token}\n`);
}

async function list(db: Db): Promise<void> {
  const page = await listApiKeys(db, DEFAULT_PROJECT_ID, { limit: 100, after: undefined, before: undefined });
  const rows = page.data.map((key) => [key.id, key.permission, key.created_at, key.last_used_at ?? 'never used', key.name].join('  '));
  process.stdout.write(rows.length ? `${rows.join('\n')}\n` : 'No API keys yet: the next start creates one, or run `npm run keys -- create --name <name>`.\n');
  if (page.has_more) process.stdout.write('(the 100 newest; the dashboard lists them all)\n');
}

function readArgs() {
  try {
    return parseArgs({ args: process.argv.slice(2), options: { name: { type: 'string' }, permission: { type: 'string' } }, allowPositionals: true });
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const args = readArgs();
  const [command, ...rest] = args.positionals;
  if ((command !== 'create' && command !== 'list') || rest.length > 0) fail(USAGE);
  let db: Db;
  let databaseUrl: string | undefined;
  try {
    databaseUrl = readConfig().databaseUrl;
    if (isPostgresUrl(databaseUrl)) await reachPostgres(databaseUrl);
    db = openDb(databaseUrl);
    await migrate(db);
  } catch (error) {
    const line = error instanceof ConfigError ? error.message : databaseUrl && sqliteErrorLine(error, databaseUrl);
    if (line === undefined) throw error;
    fail(line);
  }
  try {
    if (command === 'create') await create(db, args.values.name, args.values.permission);
    else await list(db);
  } catch (error) {
    if (error instanceof AppError) fail(error.message);
    throw error;
  } finally {
    await db.destroy();
  }
}

await main();
