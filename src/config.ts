// The only reader of process.env. Parsed once at start, validated, frozen: a bad value stops start-up
// with one line that names the variable.

export type Role = 'all' | 'api' | 'worker';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly apiKey: string | undefined;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  readonly logLevel: string;
  readonly allowPrivateAttachmentUrls: boolean;
  /** Keys Mailroom's own encryption and signatures; see secret.ts for the default. */
  readonly secret: string | undefined;
  readonly worker: {
    readonly concurrency: number;
    readonly maxAttempts: number;
    readonly pollMs: number;
    readonly lockTimeoutMs: number;
    readonly shutdownTimeoutMs: number;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function fail(name: string, why: string): never {
  throw new ConfigError(`Invalid ${name}: ${why}`);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(name, `expected a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  return fail(name, `expected true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return fail(name, `"${raw}" is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    fail(name, `expected a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} URL`);
  }
  return raw;
}

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return './data/mailroom.db';
  if (/^postgres(ql)?:\/\//.test(raw)) return url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])!;
  if (raw.includes('://')) fail('DATABASE_URL', 'expected a postgres:// URL or a SQLite file path');
  return raw;
}

function apiKey(env: Env): string | undefined {
  const raw = env.MAILROOM_API_KEY;
  if (raw === undefined || raw === '') return undefined;
  if (!/^re_[A-Za-z0-9_-]{32,}$/.test(raw)) {
    fail('MAILROOM_API_KEY', 'expected "re_" followed by at least 32 letters, digits, "_" or "-"');
  }
  return raw;
}

function secret(env: Env): string | undefined {
  const raw = env.MAILROOM_SECRET;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) fail('MAILROOM_SECRET', 'expected at least 32 characters (e.g. `openssl rand -base64 48`)');
  return raw;
}

function logLevel(env: Env): string {
  const raw = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(raw)) fail('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  return raw;
}

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function readConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const publicUrl = url(env, 'MAILROOM_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  return Object.freeze({
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: databaseUrl(env),
    apiKey: apiKey(env),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    logLevel: logLevel(env),
    allowPrivateAttachmentUrls: boolean(env, 'MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS', false),
    secret: secret(env),
    worker: Object.freeze({
      concurrency: integer(env, 'WORKER_CONCURRENCY', 16, 1, 1000),
      maxAttempts: integer(env, 'WORKER_MAX_ATTEMPTS', 20, 1, 100),
      pollMs: integer(env, 'WORKER_POLL_MS', 1000, 10, 60_000),
      lockTimeoutMs: integer(env, 'WORKER_LOCK_TIMEOUT_MS', 300_000, 1000, 86_400_000),
      shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    }),
  });
}
