import { closeSync, fdatasync } from 'node:fs';
import { promisify } from 'node:util';
import { openWal, type Db, type Tx } from '../db.ts';
import { insertTables } from '../insert-rows.ts';
import type { CommitHooks, Writer } from '../writer.ts';

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
 * Group commit on a SQLite connection. SQLite has one writer and pays for every commit, so callers that
 * arrive while a transaction is open wait and then share the next one: each is answered only after that
 * commit; their functions run one by one. (Only an in-memory database inserts here: a file's inserts
 * go to the insert thread.) If anything in a group fails, the group is rolled back and each caller runs
 * alone, so one bad write never fails another; functions must therefore only write to the database.
 * Callers are answered after the WAL sync that follows their commit (walSync), while the next group
 * already runs.
 */
export function groupCommit(db: Db, databaseFile: string, hooks: CommitHooks): Omit<Writer, 'afterCommit'> {
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
      queue.push({ run, resolve: resolve, reject });
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
