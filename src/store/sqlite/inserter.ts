import { movable, ThreadClient } from '../../threads.ts';
import type { Rows } from '../insert-rows.ts';
import type { InsertRequest } from './insert-thread.ts';
import type { WriteLock } from './write-lock.ts';

export interface Inserter {
  /** Inserts rows in one transaction, on the insert thread; resolves once they are committed and on disk. */
  insert(rows: Rows): Promise<void>;
  /** Waits for the inserts under way, then stops the thread. */
  close(): Promise<void>;
}

const THREAD_MODULE = new URL('./insert-thread.ts', import.meta.url);

/**
 * The event loop's side of the insert thread (insert-thread.ts), which has a second connection to the
 * SQLite file. Each request goes over at once (holding requests back to send several in one message
 * cost more in waiting than it saved), and the thread answers each committed group in one message,
 * errors with the message and SQLite code the caller would have seen here.
 */
export function startInserter(databaseFile: string, lock: WriteLock): Inserter {
  const thread = new ThreadClient<void>(THREAD_MODULE, { databaseFile, lock: lock.buffer }, 'insert');
  return {
    // Attachment contents and submitted sources are moved, not copied: once inserted the caller has no use for them.
    insert: (rows) => {
      const blobs = [...(rows.email_attachments ?? []).map((a) => a.content), ...(rows.email_sources ?? []).map((s) => s.raw)];
      return thread.call({ rows } satisfies Omit<InsertRequest, 'id'>, movable(blobs));
    },
    close: () => thread.close(),
  };
}
