import type { Availability } from './availability.ts';
import { isPostgres, writeLockOf, type Db, type Tx } from './db.ts';
import { groupCommit } from './group-commit.ts';
import { insertTables, type Rows } from './insert-rows.ts';
import { groupInserts } from './postgres/insert-groups.ts';
import { startInserter } from './sqlite/inserter.ts';
import { walSync } from './sqlite/wal-sync.ts';

// Every write transaction, on either database: group commit (with SQLite's WAL sync off the event
// loop); what runs after a commit; and the workers woken by a commit that added jobs.

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

/**
 * The writer for a database. Transactions go through group commit (group-commit.ts): callers that
 * arrive together share one. On PostgreSQL, inserts of plain rows are grouped too, the requests of
 * many callers one statement (postgres/insert-groups.ts). On a SQLite file, inserts of plain rows (the
 * emails of POST /emails and /emails/batch, the API's hot path) run on a thread with a connection of
 * its own (inserter.ts), so that executing and committing them takes no time from the event loop. The
 * two connections take turns for SQLite's single write lock through the process's write lock
 * (write-lock.ts). An in-memory database cannot be shared with a thread: there everything runs on the
 * event loop.
 */
export function createWriter(db: Db, databaseFile: string, availability: Availability, onJobsAdded: () => void = () => {}): Writer {
  const hooks = commitHooks(onJobsAdded);
  let writer: Omit<Writer, 'afterCommit'>;
  if (isPostgres(db)) {
    const groups = groupCommit(db, hooks);
    const inserts = groupInserts(db);
    writer = {
      transaction: groups.transaction,
      insert: inserts.insert,
      async close() {
        await inserts.close();
        await groups.close();
      },
    };
  } else {
    const wal = walSync(databaseFile);
    const groups = groupCommit(db, hooks, wal.afterCommit);
    const inserter = databaseFile === ':memory:' ? undefined : startInserter(databaseFile, writeLockOf(db)!);
    writer = {
      transaction: groups.transaction,
      insert: inserter?.insert ?? ((rows) => groups.transaction((tx) => insertTables(tx, rows))),
      async close() {
        await inserter?.close();
        await groups.close();
        wal.close();
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
    // Jobs inserted with rows (POST /emails) wake the workers as a transaction's do.
    insert: async (rows) => {
      await noted(writer.insert(rows));
      if (rows.jobs && rows.jobs.length > 0) onJobsAdded();
    },
    afterCommit: hooks.add,
  };
}

/** Transactions that added or moved jobs (store/jobs.ts, insert-rows.ts mark them), by the transaction object. */
const addingJobs = new WeakSet<Tx>();

/** Marks `tx` as adding or moving jobs: once it commits, the workers are woken. */
export function markJobsAdded(tx: Tx): void {
  addingJobs.add(tx);
}

/** What must run after a transaction commits, by transaction: `add` collects it, `done` runs it, and wakes the workers when it added jobs. */
function commitHooks(onJobsAdded: () => void) {
  const pending = new WeakMap<Tx, (() => void)[]>();
  const done = (tx: Tx) => {
    const list = pending.get(tx);
    pending.delete(tx);
    list?.forEach((fn) => fn());
    if (addingJobs.delete(tx)) onJobsAdded();
  };
  return {
    add(tx: Tx, fn: () => void) {
      const list = pending.get(tx);
      if (list) list.push(fn);
      else pending.set(tx, [fn]);
    },
    done,
  };
}

export type CommitHooks = ReturnType<typeof commitHooks>;
