import { closeSync, fdatasync } from 'node:fs';
import { promisify } from 'node:util';
import { openWal } from '../db.ts';

const datasync = promisify(fdatasync);

export interface WalSync {
  /** Resolves once an fdatasync of the WAL that started after the call has finished. */
  afterCommit(): Promise<void>;
  close(): void;
}

/**
 * Makes SQLite commits durable without blocking the event loop: the database runs with
 * synchronous=NORMAL (a commit writes the WAL but does not wait for the disk), and this fdatasyncs the
 * WAL file on libuv's thread pool. `afterCommit()` resolves once an fdatasync that started after the
 * call has finished, so everything committed before it is on disk. Syncs are shared: callers that
 * commit while one runs wait for the next.
 */
export function walSync(databaseFile: string): WalSync {
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
