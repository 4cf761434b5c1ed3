// A worker thread that parses and authenticates received messages (and parses submitted ones), so that this CPU work (and a large
// message's decoding) runs beside the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { createResolver } from '../../dns.ts';
import { asBuffer, describeError, movable } from '../../threads.ts';
import { cachedResolve } from './dns-cache.ts';
import { parseMessage, readMessage, type Envelope } from './read-message.ts';

export interface ReadRequest {
  id: number;
  raw: Uint8Array;
  /** A received message's envelope, to authenticate it by; none: parse only. */
  envelope?: Envelope;
}

const { dnsServers, mta } = workerData as { dnsServers: string[] | undefined; mta: string };
const resolve = cachedResolve(createResolver(dnsServers));

parentPort!.on('message', async ({ id, raw, envelope }: ReadRequest) => {
  try {
    const message = envelope ? await readMessage(asBuffer(raw), envelope, resolve, mta) : await parseMessage(asBuffer(raw));
    parentPort!.postMessage({ id, value: message }, movable(message.attachments.map((a) => a.content)));
  } catch (error) {
    parentPort!.postMessage({ id, error: describeError(error) });
  }
});
