import type { Config } from '../../config.ts';
import { createResolver } from '../../dns.ts';
import { ThreadClient } from '../../threads.ts';
import { readReport, type Report } from '../bounces/report.ts';
import type { DmarcMessage } from '../dmarc/read-reports.ts';
import { cachedResolve } from './dns-cache.ts';
import type { ReadJob } from './reader-thread.ts';
import { parseMessage, readMessage, type Envelope, type ParsedMessage, type ReadMessage } from './read-message.ts';

export interface MessageReader {
  /** The message parsed and authenticated, and the report it is; `raw` stays readable. */
  read(raw: Buffer, envelope: Envelope): Promise<ReadMessage>;
  /** The message parsed only (a submitted one: its sender is the API key); `raw` stays readable. */
  parse(raw: Buffer): Promise<ParsedMessage>;
  /** The bounce or complaint report a message to a bounce address is, if any; `raw` stays readable. */
  report(raw: Buffer): Promise<Report | undefined>;
  /** The DMARC aggregate reports a message to a report address holds; always on the thread. */
  dmarc(raw: Buffer): Promise<DmarcMessage>;
  close(): Promise<void>;
}

/** Up to this size a message is read on the event loop: about a millisecond per 6 KB, less than a thread's round trip. */
export const INLINE_BYTES = 64 * 1024;

const THREAD_MODULE = new URL('./reader-thread.ts', import.meta.url);

/**
 * Received messages are parsed and authenticated (submitted ones parsed, reports read) where it costs
 * least: a small one on the event loop (measured: the hop to a thread and back cost more than its
 * reading), a larger one on a reader thread, so that decoding megabytes of attachments, or a hostile
 * report, never holds the loop that serves the API and the other SMTP sessions. The thread starts with
 * the first large message. Both ask DNS_SERVERS, each through a minute's cache of answers.
 */
export function createMessageReader(config: Config): MessageReader {
  const resolve = cachedResolve(createResolver(config.dnsServers));
  const thread = new ThreadClient<ReadMessage | ParsedMessage | Report | DmarcMessage | undefined>(THREAD_MODULE, { dnsServers: config.dnsServers, mta: config.mailHostname }, 'reader');
  const onThread = (job: ReadJob) => thread.call(job);
  return {
    read: (raw, envelope) =>
      raw.length <= INLINE_BYTES ? readMessage(raw, envelope, resolve, config.mailHostname) : (onThread({ raw, envelope, kind: 'read' }) as Promise<ReadMessage>),
    parse: (raw) => (raw.length <= INLINE_BYTES ? parseMessage(raw) : (onThread({ raw, kind: 'parse' }) as Promise<ParsedMessage>)),
    report: async (raw) => (raw.length <= INLINE_BYTES ? readReport(raw) : (onThread({ raw, kind: 'report' }) as Promise<Report | undefined>)),
    // Whatever its size: a few kilobytes of zip may inflate to the cap, and reports come a few a day.
    dmarc: (raw) => onThread({ raw, kind: 'dmarc' }) as Promise<DmarcMessage>,
    close: () => thread.close(),
  };
}
