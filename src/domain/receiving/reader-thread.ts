// A worker thread that reads messages (received ones parsed and authenticated, submitted ones parsed,
// reports to bounce addresses and DMARC report addresses read), so that this CPU work (and a large message's decoding) runs beside
// the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { createResolver } from '../../dns.ts';
import { asBuffer, describeError, movable } from '../../threads.ts';
import { readReport } from '../bounces/report.ts';
import { readDmarcMessage } from '../dmarc/read-reports.ts';
import { cachedResolve } from './dns-cache.ts';
import { parseMessage, readMessage, type Envelope } from './read-message.ts';

/** What the thread is asked to read, and how. */
export type ReadJob = { raw: Uint8Array } & ({ kind: 'read'; envelope: Envelope } | { kind: 'parse' } | { kind: 'report' } | { kind: 'dmarc' });

type ReadRequest = ReadJob & { id: number };

const { dnsServers, mta } = workerData as { dnsServers: string[] | undefined; mta: string };
const resolve = cachedResolve(createResolver(dnsServers));

async function read(request: ReadRequest) {
  const raw = asBuffer(request.raw);
  if (request.kind === 'report') return readReport(raw);
  if (request.kind === 'dmarc') return readDmarcMessage(raw);
  return request.kind === 'read' ? readMessage(raw, request.envelope, resolve, mta) : parseMessage(raw);
}

parentPort!.on('message', (request: ReadRequest) => void answer(request));

async function answer(request: ReadRequest): Promise<void> {
  try {
    const value = await read(request);
    parentPort!.postMessage({ id: request.id, value }, movable(value && 'attachments' in value ? value.attachments.map((a) => a.content) : []));
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: describeError(error) });
  }
}
