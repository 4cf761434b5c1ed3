// Webhooks: (a) events delivered per second to a local receiver answering 200 at once, against a plain
// loop of signed fetch POSTs to the same receiver: the events (contact.created) are recorded first by
// an API process, then a worker process is started and timed until the receiver has them all; (b) what one subscribed endpoint costs end to end:
// emails delivered per second into a sink with and without it, in the same run.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureHeaders } from '../src/domain/webhooks/signature.ts';
import { postBatches, WARM_UP, type Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom, startWorkerProcess, type Mailroom } from './mailroom.ts';
import { startSink, waitForCount } from './sink.ts';

const IN_FLIGHT = 64;

/** A receiver counting what it gets; `until(n)` resolves once n requests have arrived since the last reset. */
async function startReceiver() {
  let count = 0;
  let firstAt = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200).end();
      if (count++ === 0) firstAt = performance.now();
      if (waiter && count >= waiter.n) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    reset: () => (count = 0),
    /** When the first request since the last reset arrived. */
    firstAt: () => firstAt,
    until: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : (waiter = { n, resolve }))),
    close: () => server.close(),
  };
}

/** The baseline: n signed POSTs with fetch, IN_FLIGHT at once, as an application's own loop would send them. */
async function signedFetchLoop(url: string, n: number): Promise<number> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  let next = 0;
  const started = performance.now();
  const client = async () => {
    while (next < n) {
      const i = next++;
      const body = JSON.stringify({ type: 'email.delivered', created_at: new Date().toISOString(), data: { email_id: String(i) } });
      const headers = { 'content-type': 'application/json', ...signatureHeaders(secret, `msg_${i}`, Math.floor(Date.now() / 1000), body) };
      const response = await fetch(url, { method: 'POST', headers, body });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, client));
  return n / ((performance.now() - started) / 1000);
}

async function subscribe(mailroom: Mailroom, endpoint: string, events: string[]): Promise<void> {
  const response = await fetch(`${mailroom.url}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint, events }),
  });
  if (response.status !== 201) throw new Error(`POST /webhooks answered ${response.status}`);
}

/** Creates n contacts, 32 requests at once: each records one contact.created event. */
async function createContacts(mailroom: Mailroom, n: number): Promise<void> {
  let next = 0;
  const client = async () => {
    while (next < n) {
      const i = next++;
      const response = await fetch(`${mailroom.url}/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `contact${i}@example.com` }),
      });
      if (response.status !== 201 && response.status !== 200) throw new Error(`POST /contacts answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 32 }, client));
}

/** Emails posted in batches into `mailroom`, timed until `arrived(n)`; resolves with emails (or events) per second. */
async function timed(n: number, offset: number, mailroom: Mailroom, arrived: (n: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  await postBatches(mailroom.url, n, 4, offset);
  await arrived(n);
  return n / ((performance.now() - started) / 1000);
}

export async function benchWebhooks(options: { n: number }): Promise<Figure[]> {
  const { n } = options;
  const receiver = await startReceiver();
  const sink = await startSink();
  const env = { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
  const figures: Figure[] = [];
  try {
    await signedFetchLoop(receiver.url, WARM_UP);
    const baseline = await signedFetchLoop(receiver.url, n);
    figures.push({ name: 'signed fetch loop into the receiver (baseline)', value: baseline, unit: 'events/s' });

    // (a) Events recorded by the API alone, then delivered by a worker started apart.
    for (const round of ['warm-up', 'measured']) {
      const api = await startMailroom({ role: 'api', env });
      try {
        await subscribe(api, receiver.url, ['contact.created']);
        await createContacts(api, round === 'warm-up' ? WARM_UP : n);
        receiver.reset();
        const stopWorker = startWorkerProcess(api.databaseUrl, env);
        await receiver.until(round === 'warm-up' ? WARM_UP : n);
        // From the first event to the last: the worker's start-up is not webhook delivery.
        const rate = (n - 1) / ((performance.now() - receiver.firstAt()) / 1000);
        await stopWorker();
        if (round === 'measured') {
          figures.push(
            { name: 'Mailroom: recorded events delivered by a worker', value: rate, unit: 'events/s' },
            { name: '  / baseline', value: rate / baseline, unit: 'ratio' },
          );
        }
      } finally {
        await api.stop();
      }
    }

    // (b) Relay into the sink, without and then with an endpoint subscribed to every email event.
    const rates: number[] = [];
    for (const subscribed of [false, true]) {
      const mailroom = await startMailroom({ env: { ...env, SMTP_URL: sink.url } });
      try {
        if (subscribed) await subscribe(mailroom, receiver.url, ['email.sent', 'email.delivered']);
        sink.reset();
        await timed(WARM_UP, 0, mailroom, (count) => waitForCount(sink, count));
        sink.reset();
        rates.push(await timed(n, WARM_UP, mailroom, (count) => waitForCount(sink, count)));
      } finally {
        await mailroom.stop();
      }
    }
    figures.push(
      { name: 'delivery into the sink, no endpoint', value: rates[0]!, unit: 'emails/s' },
      { name: 'delivery into the sink, one endpoint (sent, delivered)', value: rates[1]!, unit: 'emails/s' },
      { name: '  with / without', value: rates[1]! / rates[0]!, unit: 'ratio' },
    );
    return figures;
  } finally {
    receiver.close();
    sink.close();
  }
}
