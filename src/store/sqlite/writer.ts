import { closeSync, fdatasync } from 'node:fs';
import { promisify } from 'node:util';
import type { Availability } from '../availability.ts';
import { isPostgres, openWal, writeLockOf, type Db, type Tx } from '../db.ts';
import { startInserter } from './inserter.ts';
import { insertTables, type Rows } from '../insert-rows.ts';

export interface Writer {
  /** Runs `fn` in a transaction and resolves once it is committed and on disk. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Inserts rows in one transaction and resolves once they are committed and on disk. Never from
   * inside transaction(): each would wait for the other. Attachment contents and submitted sources may
   * be moved to the insert thread rather than copied: the caller must not read them afterwards.
   */
  insert(rows: Rows): Promise<void>;
  /** Runs `fn` once the transaction `tx` belongs to has committed and is on disk; never if it rolls back. */
  afterCommit(tx: Tx, fn: () => void): void;
  /** Waits for the inserts under way, then releases what the writer holds. */
  close(): Promise<void>;
}

interface Pending {
  run: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 500;

const datasync = promisify(fdatasync);

/**
 * Makes SQLite commits durable without blocking the event loop: the database runs with
 * synchronous=NORMAL (a commit writes the WAL but does not wait for the disk), and this fdatasyncs the
 * WAL file on libuv's thread pool. `afterCommit()` resolves once an fdatasync that started after the
 * call has finished, so everything committed before it is on disk. Syncs are shared: callers that
 * commit while one runs wait for the next.
 */
function walSync(databaseFile: string): { afterCommit(): Promise<void>; close(): void } {
  if (databaseFile === ':memory:') return { afterCommit: async () => {}, close() {} };
  const fd = openWal(databaseFile);
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    running = datasync(fd).finally(() => (running = undefined));
    return running;
  };
  return {
    afterCommit() {
      if (!running) return start();
      queued ??= running.then(() => {
        queued = undefined;
        return start();
      });
      return queued;
    },
    close: () => closeSync(fd),
  };
}

/**
 * The writer for a database. PostgreSQL groups concurrent commits itself: there every caller gets its
 * own transaction from the pool. On a SQLite file, inserts of plain rows (the emails of POST /emails and
 * /emails/batch, the API's hot path) run on a thread with a connection of its own (inserter.ts), so
 * that executing and committing them takes no time from the event loop; other transactions run on the
 * event loop's connection, with group commit. The two connections take turns for SQLite's single write
 * lock through the process's write lock (write-lock.ts). An in-memory database cannot be shared with a
 * thread: there everything runs on the event loop.
 */
export function createWriter(db: Db, databaseFile: string, availability: Availability, onJobsInserted: () => void = () => {}): Writer {
  const hooks = commitHooks();
  let writer: Omit<Writer, 'afterCommit'>;
  if (isPostgres(db)) {
    writer = {
      transaction: (fn) => hooks.run(db, fn),
      insert: (rows) => db.transaction().execute((tx) => insertTables(tx, rows)),
      close: async () => {},
    };
  } else {
    const local = groupCommit(db, databaseFile, hooks);
    const inserter = databaseFile === ':memory:' ? undefined : startInserter(databaseFile, writeLockOf(db)!);
    writer = {
      transaction: local.transaction,
      insert: inserter?.insert ?? local.insert,
      async close() {
        await inserter?.close();
        await local.close();
      },
    };
  }
  // A commit is what proves a database back from a fault; the insert thread's failures are told here.
  const noted = async <T>(write: Promise<T>): Promise<T> => {
    try {
      const result = await write;
      availability.committed();
      return result;
    } catch (error) {
      availability.failed(error);
      throw error;
    }
  };
  return {
    ...writer,
    transaction: (fn) => noted(writer.transaction(fn)),
    // Jobs inserted with rows (POST /emails, a broadcast's fan-out) wake the workers as enqueue does.
    insert: async (rows) => {
      await noted(writer.insert(rows));
      if (rows.jobs && rows.jobs.length > 0) onJobsInserted();
    },
    afterCommit: hooks.add,
  };
}

/** What must run after a transaction commits, by transaction: `add` collects it, `done` runs it. */
function commitHooks() {
  const pending = new WeakMap<Tx, (() => void)[]>();
  const done = (tx: Tx) => {
    const list = pending.get(tx);
    pending.delete(tx);
    list?.forEach((fn) => fn());
  };
  return {
    add(tx: Tx, fn: () => void) {
      const list = pending.get(tx);
      if (list) list.push(fn);
      else pending.set(tx, [fn]);
    },
    done,
    /** Runs `fn` in a transaction of its own, then what it registered once it has committed. */
    async run<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
      let transaction: Tx | undefined;
      const result = await db.transaction().execute((tx) => {
        transaction = tx;
        return fn(tx);
      });
      done(transaction!);
      return result;
    },
  };
}

/**
 * Group commit on a SQLite connection. SQLite has one writer and pays for every commit, so callers that
 * arrive while a transaction is open wait and then share the next one: each is answered only after that
 * commit; their functions run one by one. (Only an in-memory database inserts here: a file's inserts
 * go to the insert thread.) If anything in a group fails, the group is rolled back and each caller runs
 * alone, so one bad write never fails another; functions must therefore only write to the database.
 * Callers are answered after the WAL sync that follows their commit (walSync), while the next group
 * already runs.
 */
function groupCommit(db: Db, databaseFile: string, hooks: ReturnType<typeof commitHooks>): Omit<Writer, 'afterCommit'> {
  const queue: Pending[] = [];
  let draining = false;
  const wal = walSync(databaseFile);
  // Answers callers once their commit is on disk. The drain waits for that sync too, but the event
  // loop does not: requests go on arriving meanwhile and form the next, larger group.
  const answer = (group: Pending[], results: unknown[], tx: Tx) =>
    wal.afterCommit().then(
      () => {
        group.forEach((p, i) => p.resolve(results[i]));
        hooks.done(tx);
      },
      (error) => group.forEach((p) => p.reject(error)),
    );
  // Runs `fn` in a transaction, resolving with its result and the transaction it ran in.
  const inTransaction = async <T>(fn: (tx: Tx) => Promise<T>): Promise<[T, Tx]> => {
    let transaction: Tx | undefined;
    const result = await db.transaction().execute((tx) => {
      transaction = tx;
      return fn(tx);
    });
    return [result, transaction!];
  };
  const runAlone = async (p: Pending) => {
    try {
      const [result, tx] = await inTransaction(p.run);
      await answer([p], [result], tx);
    } catch (error) {
      p.reject(error);
    }
  };

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_GROUP);
      if (group.length === 1) {
        await runAlone(group[0]!);
        continue;
      }
      let committed: [unknown[], Tx];
      try {
        committed = await inTransaction(async (tx) => {
          const out: unknown[] = [];
          for (const p of group) out.push(await p.run(tx));
          return out;
        });
      } catch {
        // What the group registered to run after its commit goes with its transaction: each runs again.
        for (const p of group) await runAlone(p);
        continue;
      }
      await answer(group, ...committed);
    }
    draining = false;
  }

  function enqueue<T>(run: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (draining) return;
      draining = true;
      // SQLite statements complete without yielding, so a transaction started now would always run
      // alone: wait one turn of the event loop for the callers that are ready at the same time.
      setImmediate(() => void drain());
    });
  }

  return {
    transaction: enqueue,
    insert: (rows) => enqueue((tx) => insertTables(tx, rows)),
    close: async () => wal.close(),
  };
}
