// What can stop a start in its environment, said in one line that names the cause and the variable to
// look at, as the README promises. Anything else is a bug and keeps its stack trace.
import pg from 'pg';
import { ConfigError } from './config.ts';

/** How long a start waits for PostgreSQL to answer: a host that drops packets would hold it for minutes. */
const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

interface SystemError extends Error {
  code?: string;
  severity?: string;
}

/** Why a connection to PostgreSQL failed, in a few words. */
function postgresFailure(error: SystemError, server: string): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return `Cannot reach PostgreSQL at ${server} (DATABASE_URL): connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot reach PostgreSQL at ${server} (DATABASE_URL): no such host`;
  }
  // 28P01 wrong password, 28000 no such role, 3D000 no such database: the server's own words say which.
  if (error.severity === 'FATAL') return `PostgreSQL at ${server} refused the connection (DATABASE_URL): ${error.message}`;
  return `Cannot reach PostgreSQL at ${server} (DATABASE_URL): ${error.message}`;
}

/**
 * Connects once to the PostgreSQL of `url` and disconnects, so that a start fails at once with the
 * cause when it cannot connect: a ConfigError naming the server (never the credentials) and why.
 */
export async function reachPostgres(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const server = `${hostname}:${port || 5432}`;
  const client = new pg.Client({ connectionString: url });
  let timer: NodeJS.Timeout | undefined;
  const noAnswer = new Promise<never>((_, reject) => {
    const line = `Cannot reach PostgreSQL at ${server} (DATABASE_URL): no answer within ${POSTGRES_CONNECT_TIMEOUT_MS / 1000} s`;
    timer = setTimeout(() => reject(new ConfigError(line)), POSTGRES_CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), noAnswer]);
  } catch (error) {
    throw error instanceof ConfigError ? error : new ConfigError(postgresFailure(error as SystemError, server));
  } finally {
    clearTimeout(timer);
    client.end().catch(() => {});
  }
}

/** The line for a SQLite database that cannot be opened at start, or undefined when that is not the failure. */
export function sqliteErrorLine(error: unknown, databaseUrl: string): string | undefined {
  const { code, message } = error as SystemError;
  const denied = code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code?.startsWith('SQLITE_CANTOPEN');
  return denied ? `Cannot open the SQLite database ${databaseUrl} (DATABASE_URL): ${message}` : undefined;
}

/** The line for a failure to listen on `host`:`port`, set by `variable`, or undefined when that is not the failure. */
export function listenErrorLine(error: unknown, variable: string, host: string, port: number): string | undefined {
  switch ((error as SystemError).code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is in use by another process (${variable})`;
    case 'EACCES':
      return `Port ${port} on ${host} needs privileges this process lacks (${variable})`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine (HOST)`;
    default:
      return undefined;
  }
}
