// The insert thread (inserter.ts): a connection of its own to the SQLite file, on which it inserts the
// rows that the event loop sends, a group at a time.
import { fdatasyncSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { describeError, type ThreadAnswer } from '../../threads.ts';
import { openSqlite, openWal } from '../db.ts';
import { ON_CONFLICT, type Rows } from '../insert-rows.ts';
import { WriteLock } from './write-lock.ts';

export interface InsertRequest {
  id: number;
  rows: Rows;
}

/** What became of a request: nothing (committed and on disk), or the error that stopped it. */
type InsertAnswer = ThreadAnswer<void>;

const MAX_GROUP = 500;

const { databaseFile, lock: lockBuffer } = workerData as { databaseFile: string; lock: SharedArrayBuffer };
const sqlite = openSqlite(databaseFile);
const lock = new WriteLock(lockBuffer);
const wal = openWal(databaseFile);

const statements = new Map<string, SQLite.Statement>();
// The statement each table used last: rows of a table nearly always have the same columns.
const recent = new Map<string, { columns: string[]; statement: SQLite.Statement }>();
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

function statementFor(table: string, columns: string[]): SQLite.Statement {
  const last = recent.get(table);
  if (last && last.columns.length === columns.length && last.columns.every((column, i) => column === columns[i])) return last.statement;
  const key = `${table}(${columns.join(',')})`;
  let statement = statements.get(key);
  if (!statement) {
    const onConflict = ON_CONFLICT[table as keyof typeof ON_CONFLICT] ?? '';
    statement = sqlite.prepare(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${onConflict}`);
    statements.set(key, statement);
  }
  recent.set(table, { columns, statement });
  return statement;
}

/**
 * One row; a column whose value is undefined is left out. A message delivers each Buffer (attachment
 * contents) as a plain Uint8Array, which SQLite stores as the same blob.
 */
function insertRow(table: string, row: Record<string, unknown>): void {
  let columns = Object.keys(row);
  let values = Object.values(row);
  if (values.includes(undefined)) {
    columns = columns.filter((column) => row[column] !== undefined);
    values = columns.map((column) => row[column]);
  }
  statementFor(table, columns).run(values);
}

/** One request's rows, tables in the order given (parents first). */
function insertRows(rows: Rows): void {
  for (const [table, list] of Object.entries(rows) as [string, Record<string, unknown>[]][]) {
    for (const row of list) insertRow(table, row);
  }
}

const insertGroup = sqlite.transaction((group: InsertRequest[]) => group.forEach(({ rows }) => insertRows(rows)));
const insertAlone = sqlite.transaction(insertRows);

/**
 * Writes a group in one transaction. If a request fails (say, on a duplicate key), the group is rolled
 * back and each request is written alone, so that the others still commit.
 */
function writeGroup(group: InsertRequest[]): InsertAnswer[] {
  try {
    insertGroup.immediate(group);
    return group.map(({ id }) => ({ id }));
  } catch {
    return group.map(({ id, rows }) => {
      try {
        insertAlone.immediate(rows);
        return { id };
      } catch (error) {
        return { id, error: describeError(error) };
      }
    });
  }
}

/** The requests whose messages arrived meanwhile, taken from the port at once rather than as events. */
function receiveWaiting(): void {
  for (let message = receiveMessageOnPort(parentPort!); message; message = receiveMessageOnPort(parentPort!)) {
    queue.push(message.message as InsertRequest);
  }
}

/**
 * Group commit: the requests that arrived while a group was written form the next one. Each group is
 * one transaction, taken under the process's write lock; the WAL is synced before the group is answered,
 * so an answer without an error means the rows are on disk.
 */
async function run(): Promise<void> {
  for (receiveWaiting(); queue.length > 0; receiveWaiting()) {
    const group = queue.splice(0, MAX_GROUP);
    let answers: InsertAnswer[];
    await lock.acquire();
    try {
      answers = writeGroup(group);
    } finally {
      lock.release();
    }
    try {
      fdatasyncSync(wal);
    } catch (error) {
      answers = group.map(({ id }) => ({ id, error: describeError(error) }));
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
