import type { Worker } from 'node:worker_threads';
import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { asBuffer, movable, startThread } from '../threads.ts';
import { buildMessage } from './build-message.ts';
import type { BuildRequest } from './compose-thread.ts';
import { createDkimSigner, type SigningDomain } from './dkim.ts';

export interface Composer {
  /**
   * The message of an email, composed and (for a Mailroom domain) DKIM-signed on a composer thread.
   * The attachments' memory may be moved to that thread: the caller must not read them afterwards.
   */
  build(email: EmailRow, attachments: AttachmentRow[], date: Date, domain: SigningDomain | undefined): Promise<Buffer>;
  close(): Promise<void>;
}

interface Waiting {
  resolve(raw: Buffer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  waiting: Map<number, Waiting>;
}

const THREAD_MODULE = new URL('./compose-thread.ts', import.meta.url);

/**
 * Composing a message (about half of what a send costs in nodemailer) and signing it are CPU work:
 * `threads` worker threads do it beside the event loop, which meanwhile serves requests, reads and
 * writes the database and talks SMTP. A thread that dies fails the messages it held (their jobs are
 * retried) and is replaced. With 0 threads the work runs on the event loop.
 */
export function createComposer(threads: number, secret: string): Composer {
  if (threads === 0) {
    const dkim = createDkimSigner(secret);
    return { build: (email, attachments, date, domain) => buildMessage(dkim, email, attachments, date, domain), close: async () => {} };
  }
  let sequence = 0;
  let closing = false;

  function start(): Thread {
    const worker = startThread(THREAD_MODULE, { secret });
    const thread: Thread = { worker, waiting: new Map() };
    worker.on('message', ({ id, raw, error }: { id: number; raw?: Uint8Array; error?: string }) => {
      const entry = thread.waiting.get(id)!;
      thread.waiting.delete(id);
      if (thread.waiting.size === 0) worker.unref();
      if (raw) entry.resolve(asBuffer(raw));
      else entry.reject(new Error(error));
    });
    worker.on('error', (error) => fail(thread, error));
    worker.on('exit', () => fail(thread, new Error('the compose thread stopped')));
    // An idle thread does not keep the process alive; one holding work does.
    worker.unref();
    return thread;
  }

  // Started with the first message: an API process (or a worker in capture mode that never sends)
  // holds no thread it does not use, about 40 MB each.
  const pool: Thread[] = [];

  function fail(thread: Thread, error: Error): void {
    for (const entry of thread.waiting.values()) entry.reject(error);
    thread.waiting.clear();
    const index = pool.indexOf(thread);
    if (index !== -1 && !closing) pool[index] = start();
  }

  return {
    build(email, attachments, date, domain) {
      if (pool.length === 0) pool.push(...Array.from({ length: threads }, start));
      const id = sequence++;
      const thread = pool[id % pool.length]!;
      const request: BuildRequest = { id, email, attachments, date: date.getTime(), domain };
      return new Promise<Buffer>((resolve, reject) => {
        if (thread.waiting.size === 0) thread.worker.ref();
        thread.waiting.set(id, { resolve, reject });
        // Attachments are moved, not copied: the caller has no further use for them.
        thread.worker.postMessage(request, movable(attachments.map((a) => a.content)));
      });
    },
    close: async () => {
      closing = true;
      await Promise.all(pool.map((thread) => thread.worker.terminate()));
    },
  };
}
