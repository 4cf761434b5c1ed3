import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, type Config } from '../config.ts';
import { isPostgresUrl } from '../store/db.ts';

/** Where a SQLite install keeps its files: the database's folder (the working directory for `:memory:`). */
export function dataDirectory(config: Config): string {
  return config.databaseUrl === ':memory:' ? '.' : dirname(config.databaseUrl);
}

/**
 * The secret behind Mailroom's encryption (DKIM keys) and signatures (unsubscribe links):
 * MAILROOM_SECRET when set. A single SQLite install needs no setup: a random secret is created once in
 * a `secret` file beside the database. Processes sharing a PostgreSQL database must share the secret,
 * so there it must be set.
 */
export function resolveSecret(config: Config): string {
  if (config.secret !== undefined) return config.secret;
  if (isPostgresUrl(config.databaseUrl)) {
    throw new ConfigError('Invalid MAILROOM_SECRET: required with a PostgreSQL DATABASE_URL, so that every process shares it');
  }
  const dir = dataDirectory(config);
  const file = join(dir, 'secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = randomBytes(48).toString('base64url');
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // on a first start, before the database creates its folder
  writeFileSync(file, `${created}\n`, { mode: 0o600, flag: 'wx' });
  return created;
}
