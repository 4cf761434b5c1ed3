import type { Config } from '../../config.ts';
import { ThreadClient } from '../../threads.ts';
import type { ReadRequest } from './reader-thread.ts';
import type { Envelope, ReadMessage } from './read-message.ts';

export interface MessageReader {
  /** The message parsed and authenticated on the reader thread; `raw` is copied there, and stays readable. */
  read(raw: Buffer, envelope: Envelope): Promise<ReadMessage>;
  close(): Promise<void>;
}

const THREAD_MODULE = new URL('./reader-thread.ts', import.meta.url);

/**
 * Received messages are parsed and authenticated on one thread beside the event loop (started with the
 * first message: a process that receives nothing holds none). Authentication asks DNS_SERVERS.
 */
export function createMessageReader(config: Config): MessageReader {
  const thread = new ThreadClient<ReadMessage>(THREAD_MODULE, { dnsServers: config.dnsServers, mta: config.mailHostname }, 'reader');
  return {
    read: (raw, envelope) => thread.call({ raw, envelope } satisfies Omit<ReadRequest, 'id'>),
    close: () => thread.close(),
  };
}
