import type { Config } from '../../config.ts';
import { createResolver } from '../../dns.ts';
import { ThreadClient } from '../../threads.ts';
import { cachedResolve } from './dns-cache.ts';
import type { ReadRequest } from './reader-thread.ts';
import { parseMessage, readMessage, type Envelope, type ParsedMessage, type ReadMessage } from './read-message.ts';

export interface MessageReader {
  /** The message parsed and authenticated; `raw` stays readable. */
  read(raw: Buffer, envelope: Envelope): Promise<ReadMessage>;
  /** The message parsed only (a submitted one: its sender is the API key); `raw` stays readable. */
  parse(raw: Buffer): Promise<ParsedMessage>;
  close(): Promise<void>;
}

/** Up to this size a message is read on the event loop: about a millisecond per 6 KB, less than a thread's round trip. */
export const INLINE_BYTES = 64 * 1024;

const THREAD_MODULE = new URL('./reader-thread.ts', import.meta.url);

/**
 * Received messages are parsed and authenticated (submitted ones parsed) where it costs least: a small one on the event loop
 * (measured: the hop to a thread and back cost more than its reading), a larger one on a reader
 * thread, so that decoding megabytes of attachments never holds the loop that serves the API and the
 * other SMTP sessions. The thread starts with the first large message. Both ask DNS_SERVERS, each
 * through a minute's cache of answers.
 */
export function createMessageReader(config: Config): MessageReader {
  const resolve = cachedResolve(createResolver(config.dnsServers));
  const thread = new ThreadClient<ReadMessage | ParsedMessage>(THREAD_MODULE, { dnsServers: config.dnsServers, mta: config.mailHostname }, 'reader');
  return {
    read: (raw, envelope) =>
      raw.length <= INLINE_BYTES
        ? readMessage(raw, envelope, resolve, config.mailHostname)
        : (thread.call({ raw, envelope } satisfies Omit<ReadRequest, 'id'>) as Promise<ReadMessage>),
    parse: (raw) => (raw.length <= INLINE_BYTES ? parseMessage(raw) : (thread.call({ raw } satisfies Omit<ReadRequest, 'id'>) as Promise<ParsedMessage>)),
    close: () => thread.close(),
  };
}
