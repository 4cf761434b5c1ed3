import { closeSync, fdatasync, openSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Insertable } from 'kysely';
import { isPostgres, type Db, type Tx } from './db.ts';
import type { Database } from './schema.ts';

/** Rows to insert, by table, inserted in the order the tables are listed. */
export type Rows = { [T in keyof Database]?: Insertable<Database[T]>[] };

export interface Writer {
  /** Runs `fn` in a transaction and resolves once it is committed and on disk. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Inserts rows in one transaction and resolves once they are committed and on disk. */
  insert(rows: Rows): Promise<void>;
  close(): void;
}

// Both dialects bind a bounded number of parameters per statement (SQLite 32,766): slice large inserts.
const MAX_PARAMETERS = 30_000;

/** Inserts rows table by table, as multi-row statements. */
export async function insertRows(tx: Tx, rows: Rows): Promise<void> {
  for (const [table, list] of Object.entries(rows) as [keyof Database, Record<string, unknown>[]][]) {
    if (list.length === 0) continue;
    // Blobs (attachments) can be megabytes each: one row per statement keeps statements small.
    const hasBlob = Object.values(list[0]!).some((v) => Buffer.isBuffer(v));
    const perStatement = hasBlob ? 1 : Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(list[0]!).length));
    for (let i = 0; i < list.length; i += perStatement) {
      await tx.insertInto(table).values(list.slice(i, i + perStatement) as never).execute();
    }
  }
}

interface Pending {
  run: (tx: Tx) => Promise<unknown>;
  rows: Rows | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 500;

/** The rows of several callers merged, table by table, keeping each table's first-seen order. */
function mergeRows(group: Pending[]): Rows {
  const merged: Record<string, unknown[]> = {};
  for (const p of group) {
    for (const [table, list] of Object.entries(p.rows ?? {})) (merged[table] ??= []).push(...(list as unknown[]));
  }
  return merged as Rows;
}

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
  // SQLite has created the WAL by now (the database is open and migrated); 'a' also accepts its absence.
  const fd = openSync(`${databaseFile}-wal`, 'a');
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
 * Group commit. SQLite has one writer and pays for every commit, so callers that arrive while a
 * transaction is open wait and then share the next one: each is answered only after that commit.
 * Rows given to insert() are merged into one multi-row insert per table across the group; functions
 * given to transaction() run after them, one by one. If anything in a group fails, the group is rolled
 * back and each caller runs alone, so one bad write never fails another; functions must therefore only
 * write to the database. Callers are answered after the WAL sync that follows their commit (walSync),
 * while the next group already runs. PostgreSQL groups concurrent commits itself: there every caller
 * gets its own transaction from the pool.
 */
export function createWriter(db: Db, databaseFile: string): Writer {
  if (isPostgres(db)) {
    return {
      transaction: (fn) => db.transaction().execute(fn),
      insert: (rows) => db.transaction().execute((tx) => insertRows(tx, rows)),
      close() {},
    };
  }

  const queue: Pending[] = [];
  let draining = false;
  const wal = walSync(databaseFile);
  // Answers callers once their commit is on disk. The drain waits for that sync too, but the event
  // loop does not: requests go on arriving meanwhile and form the next, larger group.
  const answer = (group: Pending[], results: unknown[]) =>
    wal.afterCommit().then(
      () => group.forEach((p, i) => p.resolve(results[i])),
      (error) => group.forEach((p) => p.reject(error)),
    );
  const runAlone = async (p: Pending) => {
    try {
      await answer([p], [await db.transaction().execute(p.run)]);
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
      let results: unknown[];
      try {
        results = await db.transaction().execute(async (tx) => {
          await insertRows(tx, mergeRows(group));
          const out: unknown[] = [];
          for (const p of group) out.push(p.rows ? undefined : await p.run(tx));
          return out;
        });
      } catch {
        for (const p of group) await runAlone(p);
        continue;
      }
      await answer(group, results);
    }
    draining = false;
  }

  function enqueue<T>(run: (tx: Tx) => Promise<T>, rows: Rows | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, rows, resolve: resolve as (value: unknown) => void, reject });
      if (draining) return;
      draining = true;
      // SQLite statements complete without yielding, so a transaction started now would always run
      // alone: wait one turn of the event loop for the callers that are ready at the same time.
      setImmediate(() => void drain());
    });
  }

  return {
    transaction: (fn) => enqueue(fn, undefined),
    insert: (rows) => enqueue((tx) => insertRows(tx, rows), rows),
    close: () => wal.close(),
  };
}
