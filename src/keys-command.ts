import { parseArgs } from 'node:util';
import { systemClock } from './time/clock.ts';
import { ConfigError, readConfig } from './config.ts';
import { createApiKey } from './domain/api-keys/api-keys.ts';
import { createAdminKey } from './domain/projects/admin-key.ts';
import { AppError } from './errors.ts';
import { deleteAdminKey, listAdminKeys } from './store/admin-keys.ts';
import { deleteApiKey, listApiKeys } from './store/api-keys.ts';
import { isPostgresUrl, openDb, type Db } from './store/db.ts';
import { migrate } from './store/migrations/index.ts';
import { DEFAULT_PROJECT_ID, findProject } from './store/projects.ts';
import { reachPostgres, sqliteErrorLine } from './start-errors.ts';

// `npm run keys -- create --name ops`: a new API key on the database of DATABASE_URL (SQLite or
// PostgreSQL), printed once; the way back from a lost key without restarting. `--project` puts it in
// another project than the default one; `--admin` makes an admin key instead, of no project
// (docs/projects.md). `list` lists the keys, `delete` deletes one. The token alone goes to stdout, so
// `npm run -s keys -- create --name ci > key` keeps it.

const USAGE = `usage: npm run keys -- create --name <name> [--permission full_access|sending_access] [--project <id>]
       npm run keys -- create --name <name> --admin
       npm run keys -- list [--project <id>]
       npm run keys -- delete <id> [--project <id>]`;

type Args = { name?: string; permission?: string; project?: string; admin?: boolean };

function fail(line: string): never {
  process.stderr.write(`mailroom keys: ${line}\n`);
  process.exit(1);
}

/** The project `--project` names (the default project without it); a missing one ends the command. */
async function chosenProject(db: Db, id: string | undefined): Promise<{ id: string; name: string }> {
  const project = await findProject(db, id ?? DEFAULT_PROJECT_ID);
  if (!project) fail(`no project has the id "${id}": \`GET /projects\` with an admin key lists them`);
  return project;
}

async function create(db: Db, args: Args): Promise<void> {
  if (args.name === undefined) fail(`--name is required\n${USAGE}`);
  if (args.admin) {
    if (args.permission !== undefined || args.project !== undefined) fail(`an admin key is of no project and has no permission: --admin takes neither --permission nor --project\n${USAGE}`);
    const { token } = await createAdminKey({ db, clock: systemClock }, args.name);
    process.stderr.write(`Created an admin key named "${args.name}": it manages projects and reads no project's data. It is shown only this once:\n`);
    process.stdout.write(`${token}\n`);
    return;
  }
  const project = await chosenProject(db, args.project);
  const { token } = await createApiKey({ db, clock: systemClock }, project.id, { name: args.name, permission: args.permission });
  const kind = (args.permission ?? 'full_access') === 'full_access' ? 'full-access' : 'sending-access';
  const where = args.project === undefined ? '' : ` in the project "${project.name}"`;
  process.stderr.write(`Created a ${kind} API key named "${args.name}"${where}; it is shown only this once:\n`);
  process.stdout.write(`${token}\n`);
}

/** The admin keys, then the project's keys (the 100 newest), one a line; never a token. */
async function list(db: Db, args: Args): Promise<void> {
  const project = await chosenProject(db, args.project);
  const admins = (await listAdminKeys(db)).map((key) => [key.id, 'admin', key.created_at, key.name].join('  '));
  const page = await listApiKeys(db, project.id, { limit: 100, after: undefined, before: undefined });
  const rows = page.data.map((key) => [key.id, key.permission, key.created_at, key.last_used_at ?? 'never used', key.name].join('  '));
  const lines = [...admins, ...rows];
  process.stdout.write(lines.length ? `${lines.join('\n')}\n` : 'No API keys yet: the next start creates one, or run `npm run keys -- create --name <name>`.\n');
  if (page.has_more) process.stdout.write('(the 100 newest; the dashboard lists them all)\n');
}

/** Deletes the admin key `id`, or else the project's key `id`. */
async function remove(db: Db, id: string, args: Args): Promise<void> {
  if (await deleteAdminKey(db, id)) {
    process.stderr.write(`Deleted the admin key ${id}: it is refused from now on, and its dashboard sessions are over.\n`);
    return;
  }
  const project = await chosenProject(db, args.project);
  if (!(await deleteApiKey(db, project.id, id))) fail(`neither an admin key nor a key of the project "${project.name}" has the id "${id}": \`npm run keys -- list\` shows them`);
  process.stderr.write(`Deleted the API key ${id} of the project "${project.name}": a running server refuses it within a second.\n`);
}

function readArgs() {
  try {
    const options = { name: { type: 'string' }, permission: { type: 'string' }, project: { type: 'string' }, admin: { type: 'boolean' } } as const;
    return parseArgs({ args: process.argv.slice(2), options, allowPositionals: true });
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const args = readArgs();
  const [command, ...rest] = args.positionals;
  const arity = command === 'create' || command === 'list' ? 0 : command === 'delete' ? 1 : -1;
  if (rest.length !== arity) fail(USAGE);
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
    if (command === 'create') await create(db, args.values);
    else if (command === 'list') await list(db, args.values);
    else await remove(db, rest[0]!, args.values);
  } catch (error) {
    if (error instanceof AppError) fail(error.message);
    throw error;
  } finally {
    await db.destroy();
  }
}

await main();
