import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { AppError } from '../errors.ts';

// Whether the database works: the one reading of a failure as the database's condition (gone,
// read-only, full) rather than a bug, and the state every part reports (health, metrics) and logs once
// per change. Requests and jobs that meet an outage fail with 503 (507 when full), 451 on SMTP, and
// are tried again; nothing is acknowledged that did not commit.

/** What a failure says of the database: it cannot be reached (or is restarting), it takes no writes, it is out of space. */
export type Fault = 'unavailable' | 'read_only' | 'full';

// PostgreSQL's SQLSTATEs: 57P01-03 shut down or starting (a restart, a terminated backend), 53300 too
// many connections, class 08 connection exceptions; 25006 a standby or a read-only default (a failover
// in progress); 53100 disk full. SQLite's result codes: a file that cannot be opened, read or written,
// or a write lock another process held past busy_timeout; read-only; full.
const UNAVAILABLE_CODES = /^(57P0[123]|53300|08...|SQLITE_(CANTOPEN|IOERR|BUSY).*)$/;
const READ_ONLY_CODES = /^(25006|SQLITE_READONLY.*)$/;
const FULL_CODES = /^(53100|SQLITE_FULL)$/;
// Node's errors for a server gone, a disk full or read-only: the database's fault only when the
// database layer saw them (failed() marks them), not a webhook's refused connection.
const SYSTEM_CODES: Record<string, Fault> = {
  ECONNREFUSED: 'unavailable',
  ECONNRESET: 'unavailable',
  ETIMEDOUT: 'unavailable',
  EPIPE: 'unavailable',
  EHOSTUNREACH: 'unavailable',
  ENETUNREACH: 'unavailable',
  EAI_AGAIN: 'unavailable',
  EIO: 'unavailable',
  EROFS: 'read_only',
  ENOSPC: 'full',
  EDQUOT: 'full',
};
// pg's own errors for a connection that ended, never came, or stopped answering.
const UNAVAILABLE_MESSAGE = /^Connection terminated|timeout exceeded when trying to connect|Query read timeout|is not queryable/;

const FROM_DATABASE = Symbol('mailroom.fromDatabase');

/** The fault of the database that `error` is, or undefined when it is something else (a bug, a constraint, bad input). */
export function faultOf(error: unknown): Fault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (FULL_CODES.test(code)) return 'full';
    if (READ_ONLY_CODES.test(code)) return 'read_only';
    if (UNAVAILABLE_CODES.test(code)) return 'unavailable';
    if (FROM_DATABASE in error && SYSTEM_CODES[code]) return SYSTEM_CODES[code];
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return 'unavailable';
  // Node's connect to a name with several addresses fails with each address's error.
  if (FROM_DATABASE in error && Array.isArray(errors)) return errors.map((e) => faultOf(markFromDatabase(e))).find((fault) => fault !== undefined);
  return undefined;
}

function markFromDatabase(error: unknown): unknown {
  if (typeof error === 'object' && error !== null && !(FROM_DATABASE in error) && Object.isExtensible(error)) Object.defineProperty(error, FROM_DATABASE, { value: true });
  return error;
}

const FAULT_ERRORS: Record<Fault, () => AppError> = {
  unavailable: () => new AppError('service_unavailable', 'Mailroom cannot reach its database right now; try again in a few seconds.'),
  read_only: () => new AppError('service_unavailable', "Mailroom's database takes no writes right now (a failover or maintenance); try again in a few seconds."),
  full: () => new AppError('insufficient_storage', "Mailroom's database is out of space; nothing was written. Try again once space is freed."),
};

/** The AppError a request or an SMTP command that met `error` answers with (503, or 507 when full), or undefined when `error` is no fault of the database. */
export function faultError(error: unknown): AppError | undefined {
  const fault = faultOf(error);
  return fault && FAULT_ERRORS[fault]();
}

/** The database's fault now: what, since when (epoch ms), and the error that said so. */
export interface Outage {
  fault: Fault;
  since: number;
  message: string;
}

export interface Availability {
  /** The database's fault now; undefined while it works. */
  outage(): Outage | undefined;
  /**
   * Notes a failure of the database layer (a query, a connection, a commit): true, and the database
   * marked down, when it is a fault of the database; false for anything else. Callers above the
   * database layer only read faultOf().
   */
  failed(error: unknown): boolean;
  /** Notes a transaction that committed: proof that the database works again, a second after the last fault. */
  committed(): void;
  /** Asks the database now (the health checks): the probe's answer is noted as failed() or committed() would. */
  check(): Promise<Outage | undefined>;
  /** Calls `listener` each time the database comes back (after its fault is cleared). */
  onBack(listener: () => void): () => void;
  /** How the database is asked while it is down: `run` throws what is wrong; an answer clears the faults it can see. */
  setProbe(probe: Probe): void;
  close(): void;
}

export interface Probe {
  run(): Promise<void>;
  /** The faults an answer proves over: a read cannot prove that writes fit on the disk again. */
  clears: readonly Fault[];
}

/** How often the database is asked while it is down. */
const PROBE_EVERY_MS = 1000;

/**
 * A fault is cleared only by a success this long after the last failure, so that a database that
 * fails some operations and not others (full: updates fit, inserts do not) is not logged up and down.
 */
const QUIET_MS = 1000;

/** A health check's question to the database gives up after this long: a hung server is a down one. */
const CHECK_TIMEOUT_MS = 2000;

/**
 * The database's state for one process: down at the first fault (one warning), up again once a probe
 * (every second while down) or a commit succeeds a second after the last fault (one info line, and
 * the listeners called: workers hand back what they could not finish, and claim again).
 */
export function createAvailability(log: Logger, now: () => number): Availability {
  let current: Outage | undefined;
  let lastFaultAt = -Infinity;
  let probe: Probe | undefined;
  let timer: NodeJS.Timeout | undefined;
  let probing = false;
  let closed = false;
  const listeners = new Set<() => void>();

  const back = () => {
    if (!current || performance.now() - lastFaultAt < QUIET_MS) return;
    const seconds = Math.round((now() - current.since) / 100) / 10;
    log.info({ fault: current.fault, down_s: seconds }, `the database is back after ${seconds} s`);
    current = undefined;
    clearTimeout(timer);
    timer = undefined;
    for (const listener of listeners) listener();
  };

  const failed = (error: unknown): boolean => {
    const fault = faultOf(markFromDatabase(error));
    if (!fault) return false;
    lastFaultAt = performance.now();
    const message = String((error as { message?: unknown }).message ?? error);
    // Already down: the state names the latest fault (a restart may become a recovery), with no new line.
    if (current) current = { ...current, fault, message };
    else {
      current = { fault, since: now(), message };
      log.warn({ fault, err: error }, `the database is ${fault === 'unavailable' ? 'unavailable' : fault === 'full' ? 'full' : 'read-only'}: ${message}`);
    }
    schedule();
    return true;
  };

  const runProbe = async (): Promise<void> => {
    if (!probe) return;
    const clears = probe.clears;
    try {
      await probe.run();
      if (current && clears.includes(current.fault)) back();
    } catch (error) {
      failed(error);
    }
  };

  // One probe at a time: against a hung server one waits for its connection's timeout.
  function schedule(): void {
    if (timer || probing || closed || !probe) return;
    timer = setTimeout(() => {
      timer = undefined;
      probing = true;
      void runProbe().finally(() => {
        probing = false;
        if (current) schedule();
      });
    }, PROBE_EVERY_MS);
    timer.unref();
  }

  return {
    outage: () => current,
    failed,
    committed: back,
    async check() {
      let timeout: NodeJS.Timeout | undefined;
      const noAnswer = new Promise<void>((_, reject) => {
        timeout = setTimeout(() => reject(Object.assign(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })), CHECK_TIMEOUT_MS);
      });
      try {
        await Promise.race([runProbe(), noAnswer]);
      } catch (error) {
        failed(error);
      } finally {
        clearTimeout(timeout);
      }
      return current;
    },
    onBack(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setProbe(next) {
      probe = next;
      if (current) schedule();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      listeners.clear();
    },
  };
}
