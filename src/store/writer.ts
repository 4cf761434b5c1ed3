import { isPostgres, type Db, type Tx } from './db.ts';

export interface Writer {
  /** Runs `fn` in a transaction and resolves once it is committed. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

interface Pending {
  fn: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 500;

/**
 * Group commit. SQLite has one writer and pays one fsync per commit, so callers that arrive while a
 * transaction is open wait and then share the next one: each is answered only after that commit.
 * Under load this turns many small fsynced transactions into few large ones; a caller alone waits
 * one turn of the event loop. If one caller fails, the group is rolled back and each caller runs alone, so one bad write
 * never fails another. Callers' functions therefore only write to the database. PostgreSQL groups
 * concurrent commits itself, so there every caller gets its own transaction from the pool.
 */
export function createWriter(db: Db): Writer {
  if (isPostgres(db)) return { transaction: (fn) => db.transaction().execute(fn) };

  const queue: Pending[] = [];
  let draining = false;
  const runAlone = (p: Pending) => db.transaction().execute(p.fn).then(p.resolve, p.reject);

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
          const out: unknown[] = [];
          for (const p of group) out.push(await p.fn(tx));
          return out;
        });
      } catch {
        for (const p of group) await runAlone(p);
        continue;
      }
      group.forEach((p, i) => p.resolve(results[i]));
    }
    draining = false;
  }

  return {
    transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        if (draining) return;
        draining = true;
        // SQLite statements complete without yielding, so a transaction started now would always run
        // alone: wait one turn of the event loop for the callers that are ready at the same time.
        setImmediate(() => void drain());
      });
    },
  };
}
