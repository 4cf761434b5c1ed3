import type { Worker } from 'node:worker_threads';
import { movable, startThread } from '../threads.ts';
import type { Rows } from './insert-rows.ts';
import type { InsertAnswer, InsertRequest } from './insert-thread.ts';
import type { WriteLock } from './write-lock.ts';

export interface Inserter {
  /** Inserts rows in one transaction, on the insert thread; resolves once they are committed and on disk. */
  insert(rows: Rows): Promise<void>;
  /** Waits for the inserts under way, then stops the thread. */
  close(): Promise<void>;
}

interface Waiting {
  promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

const THREAD_MODULE = new URL('./insert-thread.ts', import.meta.url);

/** An error from the thread as the caller would have seen it here: same message, same SQLite code. */
function toError({ message, code }: NonNullable<InsertAnswer['error']>): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

/**
 * The event loop's side of the insert thread (insert-thread.ts), which has a second connection to the
 * SQLite file. Each request goes over at once (holding requests back to send several in one message
 * cost more in waiting than it saved), and the thread answers each committed group in one message.
 * The thread starts with the first insert. If it dies, the requests it held fail (none of them was
 * acknowledged) and the next insert starts a new one.
 */
export function startInserter(databaseFile: string, lock: WriteLock): Inserter {
  const waiting = new Map<number, Waiting>();
  let sequence = 0;
  let thread: Worker | undefined;

  function start(): Worker {
    const worker = startThread(THREAD_MODULE, { databaseFile, lock: lock.buffer });
    worker.on('message', (answers: InsertAnswer[]) => {
      for (const { id, error } of answers) {
        const entry = waiting.get(id)!;
        waiting.delete(id);
        if (error) entry.reject(toError(error));
        else entry.resolve();
      }
      // An idle thread does not keep the process alive; one holding inserts does.
      if (waiting.size === 0) worker.unref();
    });
    const fail = (error: Error) => {
      if (thread !== worker) return;
      thread = undefined;
      for (const entry of waiting.values()) entry.reject(error);
      waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the insert thread stopped')));
    return worker;
  }

  return {
    insert(rows) {
      const id = sequence++;
      const entry = {} as Waiting;
      entry.promise = new Promise<void>((resolve, reject) => Object.assign(entry, { resolve, reject }));
      thread ??= start();
      try {
        // Throws for rows a message cannot carry (a function, say): then nothing was sent.
        // Attachment contents are moved, not copied: once inserted the caller has no use for them.
        thread.postMessage({ id, rows } satisfies InsertRequest, movable((rows.email_attachments ?? []).map((a) => a.content)));
      } catch (error) {
        entry.reject(error as Error);
        return entry.promise;
      }
      waiting.set(id, entry);
      if (waiting.size === 1) thread.ref();
      return entry.promise;
    },
    async close() {
      await Promise.allSettled([...waiting.values()].map((entry) => entry.promise));
      await thread?.terminate();
      thread = undefined;
    },
  };
}
