import { asBuffer, movable, ThreadClient } from '../../threads.ts';
import { trackingKey } from '../tracking/tracking-tokens.ts';
import type { Tracking } from '../tracking/tracked-html.ts';
import { buildMessage, buildTrackedMessages, type ComposedContent, type MessageContent } from './signed-message.ts';
import type { Build } from './compose-thread.ts';
import { createDkimSigner, type SigningDomain } from '../../delivery/dkim.ts';

export interface Composer {
  /**
   * The message of an email, composed (or as submitted) and, for a Mailroom domain, DKIM-signed on a
   * composer thread. The attachments' or the source's memory may be moved to that thread: the caller
   * must not read them afterwards.
   */
  build(content: MessageContent, domain: SigningDomain | undefined): Promise<Buffer>;
  /** The messages of an email from a domain that tracks, one per recipient's tracking, on one thread (the attachments moved once). */
  buildTracked(content: ComposedContent, domain: SigningDomain, trackings: Tracking[]): Promise<Buffer[]>;
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
    const key = trackingKey(secret);
    return {
      build: (content, domain) => buildMessage(dkim, content, domain),
      buildTracked: (content, domain, trackings) => buildTrackedMessages(dkim, key, content, domain, trackings),
      close: async () => {},
    };
  }
  const pool = Array.from({ length: threads }, () => new ThreadClient<Uint8Array | Uint8Array[]>(THREAD_MODULE, { secret }, 'compose'));
  let sequence = 0;
  const call = (request: Build, transfer: ArrayBuffer[]) => pool[sequence++ % pool.length]!.call(request, transfer);
  // Attachments and sources are moved, not copied: the caller has no further use for them.
  const composed = ({ email, attachments, date }: ComposedContent, domain: SigningDomain | undefined, trackings?: Tracking[]) =>
    call({ email, attachments, date: date.getTime(), domain, trackings }, movable(attachments.map((a) => a.content)));
  return {
    async build(content, domain) {
      if ('source' in content) return asBuffer((await call({ source: content.source, domain }, movable([content.source]))) as Uint8Array);
      return asBuffer((await composed(content, domain)) as Uint8Array);
    },
    async buildTracked(content, domain, trackings) {
      return ((await composed(content, domain, trackings)) as Uint8Array[]).map(asBuffer);
    },
    close: async () => {
      await Promise.all(pool.map((thread) => thread.close()));
    },
  };
}
