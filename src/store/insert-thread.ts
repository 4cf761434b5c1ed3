// The insert thread (inserter.ts): a connection of its own to the SQLite file, on which it inserts the
// rows that the event loop sends, a group at a time.
import { fdatasyncSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { openSqlite } from './db.ts';
import type { Rows } from './insert-rows.ts';
import { WriteLock } from './write-lock.ts';

export interface InsertRequest {
  id: number;
  rows: Rows;
}

/** What became of a request: nothing (committed and on disk), or the error that stopped it. */
export interface InsertAnswer {
  id: number;
  error?: { message: string; code?: string };
}

const MAX_GROUP = 500;

const { databaseFile, lock: lockBuffer } = workerData as { databaseFile: string; lock: SharedArrayBuffer };
const sqlite = openSqlite(databaseFile);
const lock = new WriteLock(lockBuffer);
// SQLite has created the WAL by now (the event loop's connection opened and migrated the database).
const wal = openSync(`${databaseFile}-wal`, 'a');

const statements = new Map<string, SQLite.Statement>();
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** One row, with a statement prepared once per table and column list. A message delivers each Buffer
 * (attachment contents) as a plain Uint8Array, which SQLite stores as the same blob. */
function insertRow(table: string, row: Record<string, unknown>): void {
  const columns = Object.keys(row).filter((column) => row[column] !== undefined);
  const key = `${table}(${columns.join(',')})`;
  let statement = statements.get(key);
  if (!statement) {
    statement = sqlite.prepare(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    statements.set(key, statement);
  }
  statement.run(columns.map((column) => row[column]));
}

const describe = (error: unknown): InsertAnswer['error'] => {
  const { message, code } = error as { message?: string; code?: string };
  return { message: String(message ?? error), code };
};

// One request's rows, tables in the order given (parents first). Nested in insertGroup, this runs in a
// savepoint: a request that fails is undone alone, and the rest of its group still commits.
const insertRequest = sqlite.transaction((rows: Rows) => {
  for (const [table, list] of Object.entries(rows) as [string, Record<string, unknown>[]][]) {
    for (const row of list) insertRow(table, row);
  }
});

const insertGroup = sqlite.transaction((group: InsertRequest[]): InsertAnswer[] =>
  group.map(({ id, rows }) => {
    try {
      insertRequest(rows);
      return { id };
    } catch (error) {
      return { id, error: describe(error) };
    }
  }),
);

/**
 * Group commit: the requests that arrived while a group was written form the next one. Each group is
 * one transaction, taken under the process's write lock; the WAL is synced before the group is answered,
 * so an answer without an error means the rows are on disk.
 */
async function run(): Promise<void> {
  while (queue.length > 0) {
    const group = queue.splice(0, MAX_GROUP);
    let answers: InsertAnswer[];
    await lock.acquire();
    try {
      answers = insertGroup.immediate(group);
    } catch (error) {
      answers = group.map(({ id }) => ({ id, error: describe(error) }));
    } finally {
      lock.release();
    }
    try {
      fdatasyncSync(wal);
    } catch (error) {
      answers = group.map(({ id }) => ({ id, error: describe(error) }));
    }
    parentPort!.postMessage(answers);
  }
  running = false;
}

const queue: InsertRequest[] = [];
let running = false;

parentPort!.on('message', (request: InsertRequest) => {
  queue.push(request);
  if (running) return;
  running = true;
  // Requests whose messages are already here join this group.
  setImmediate(() => void run());
});
