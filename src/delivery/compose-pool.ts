import { asBuffer, movable, ThreadClient } from '../threads.ts';
import { buildMessage, type MessageContent } from './signed-message.ts';
import type { Build } from './compose-thread.ts';
import { createDkimSigner, type SigningDomain } from './dkim.ts';

export interface Composer {
  /**
   * The message of an email, composed (or as submitted) and, for a Mailroom domain, DKIM-signed on a
   * composer thread. The attachments' or the source's memory may be moved to that thread: the caller
   * must not read them afterwards.
   */
  build(content: MessageContent, domain: SigningDomain | undefined): Promise<Buffer>;
  close(): Promise<void>;
}

const THREAD_MODULE = new URL('./compose-thread.ts', import.meta.url);

/**
 * Composing a message (about half of what a send costs in nodemailer) and signing it are CPU work:
 * `threads` worker threads do it beside the event loop, which meanwhile serves requests, reads and
 * writes the database and talks SMTP. A thread that dies fails the messages it held (their jobs are
 * retried) and is replaced. With 0 threads the work runs on the event loop. Threads start with the
 * first message: an API process (or a worker in capture mode that never sends) holds no thread it does
 * not use, about 40 MB each.
 */
export function createComposer(threads: number, secret: string): Composer {
  if (threads === 0) {
    const dkim = createDkimSigner(secret);
    return { build: (content, domain) => buildMessage(dkim, content, domain), close: async () => {} };
  }
  const pool = Array.from({ length: threads }, () => new ThreadClient<Uint8Array>(THREAD_MODULE, { secret }, 'compose'));
  let sequence = 0;
  return {
    async build(content, domain) {
      const thread = pool[sequence++ % pool.length]!;
      // Attachments and sources are moved, not copied: the caller has no further use for them.
      if ('source' in content) return asBuffer(await thread.call({ source: content.source, domain } satisfies Build, movable([content.source])));
      const { email, attachments, date } = content;
      const request: Build = { email, attachments, date: date.getTime(), domain };
      return asBuffer(await thread.call(request, movable(attachments.map((a) => a.content))));
    },
    close: async () => {
      await Promise.all(pool.map((thread) => thread.close()));
    },
  };
}
