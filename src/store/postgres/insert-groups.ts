import type { Insertable } from 'kysely';
import { faultOf } from '../availability.ts';
import type { Db } from '../db.ts';
import { insertInOneStatement, MAX_POSTGRES_PARAMETERS, parameterCount, type Rows } from '../insert-rows.ts';
import type { Database } from '../schema.ts';

// Group commit for PostgreSQL's inserts of plain rows (POST /emails, the request logs): the requests
// that arrive while a group is written form the next one, one statement for all of them.

interface Request {
  rows: Rows;
  parameters: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface GroupInserts {
  /** Inserts rows in one statement with those of other requests; resolves once they are committed. */
  insert(rows: Rows): Promise<void>;
  /** Waits for the groups under way and waiting. */
  close(): Promise<void>;
}

/** The rows of several requests as one: each table's rows after one another. */
function merged(group: Request[]): Rows {
  const rows: Record<string, Insertable<Database[keyof Database]>[]> = {};
  for (const request of group) {
    for (const [table, list] of Object.entries(request.rows)) (rows[table] ??= []).push(...list);
  }
  return rows;
}

/**
 * Each commit costs PostgreSQL a WAL flush and a statement's parse and plan; 32 connections sending an
 * email each paid them 32 times where one statement of 32 emails pays them once. A group that fails
 * for the data (a duplicate key) is written again request by request, so that the others still commit;
 * one that fails for the database (down, read-only) fails every request in it.
 */
export function groupInserts(db: Db): GroupInserts {
  let queue: Request[] = [];
  let writing: Promise<void> | undefined;

  const write = async (group: Request[]) => {
    try {
      await insertInOneStatement(db, merged(group));
      group.forEach((request) => request.resolve());
    } catch (error) {
      if (group.length === 1 || faultOf(error)) return group.forEach((request) => request.reject(error));
      await Promise.all(group.map((request) => insertInOneStatement(db, request.rows).then(request.resolve, request.reject)));
    }
  };

  /** Takes the requests waiting, as many as one statement binds, until none waits. */
  const drain = async () => {
    while (queue.length > 0) {
      let parameters = 0;
      let count = 0;
      while (count < queue.length && (count === 0 || parameters + queue[count]!.parameters <= MAX_POSTGRES_PARAMETERS)) parameters += queue[count++]!.parameters;
      const group = queue.slice(0, count);
      queue = queue.slice(count);
      await write(group);
    }
    writing = undefined;
  };

  return {
    insert: (rows) =>
      new Promise<void>((resolve, reject) => {
        queue.push({ rows, parameters: parameterCount(rows), resolve, reject });
        // Requests of the same turn of the event loop join the first group.
        writing ??= new Promise<void>((started) => setImmediate(started)).then(drain);
      }),
    close: async () => {
      while (writing) await writing;
    },
  };
}
