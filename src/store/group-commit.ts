import { faultOf } from './availability.ts';
import type { Db, Tx } from './db.ts';
import type { CommitHooks } from './writer.ts';

interface Pending {
  run: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 500;

export interface GroupCommit {
  /** Runs `fn` in the next group's transaction; resolves once that has committed (and is durable). */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Waits for the groups under way and waiting. */
  close(): Promise<void>;
}

/**
 * Group commit, on either database: callers that arrive while a group's transaction is open wait and
 * then share the next one; each is answered only after that commit, and after `durable` (SQLite's WAL
 * sync) resolves. Their functions run one by one, so they must only read and write the database. If
 * anything in a group fails, the group is rolled back and each caller runs alone, so one bad write
 * never fails another; a fault of the database (down, full) fails the group at once. Every commit costs
 * a WAL flush, and on PostgreSQL a connection's round trips and the server's work for BEGIN and COMMIT:
 * a group pays them once (docs/decisions.md, "PostgreSQL: round trips, not statements"). A group waits
 * for any row lock one of its callers waits for, as that caller alone would.
 */
export function groupCommit(db: Db, hooks: CommitHooks, durable: () => Promise<void> = async () => {}): GroupCommit {
  const queue: Pending[] = [];
  let draining: Promise<void> | undefined;
  // Answers callers once their commit is durable. The drain waits for that too, but the event loop does
  // not: requests go on arriving meanwhile and form the next, larger group.
  const answer = (group: Pending[], results: unknown[], tx: Tx) =>
    durable().then(
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
      } catch (error) {
        if (faultOf(error)) {
          group.forEach((p) => p.reject(error));
          continue;
        }
        // What the group registered to run after its commit goes with its transaction: each runs again.
        for (const p of group) await runAlone(p);
        continue;
      }
      await answer(group, ...committed);
    }
    draining = undefined;
  }

  return {
    transaction: <T>(run: (tx: Tx) => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        queue.push({ run, resolve, reject });
        // Wait one turn of the event loop for the callers that are ready at the same time (SQLite's
        // statements complete without yielding: a transaction started now would always run alone).
        draining ??= new Promise<void>((started) => setImmediate(started)).then(drain);
      }),
    close: async () => {
      while (draining) await draining;
    },
  };
}
