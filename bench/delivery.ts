// End-to-end delivery: emails accepted over the API and delivered into a local SMTP sink, against
// nodemailer's own rate composing and sending the same messages straight into that sink.
import http from 'node:http';
import nodemailer from 'nodemailer';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { emailPayload, html, text } from './payload.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';

export interface Figure {
  name: string;
  value: number;
  unit: string;
}

/** Baseline: nodemailer composing and sending n messages straight into the sink; resolves with its rate. */
export async function nodemailerStraight(sink: Sink, n: number): Promise<number> {
  const transport = nodemailer.createTransport(`${sink.url}?pool=true&maxConnections=10&maxMessages=Infinity`);
  sink.reset();
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const p = emailPayload(i);
      await transport.sendMail({ from: p.from, to: p.to, subject: p.subject, html, text, headers: { 'X-Mailroom-Tags': 'category=order' } });
    }
  };
  await Promise.all(Array.from({ length: 200 }, worker));
  await waitForCount(sink, n);
  const rate = n / ((performance.now() - started) / 1000);
  transport.close();
  return rate;
}

/**
 * Posts n emails (the i-th is `payload(i)`) with `connections` requests in flight; resolves with the
 * accept rate. node:http on keep-alive connections: the load shares the cores with Mailroom, and
 * fetch spent about 270 µs of CPU per request here, against about 80 µs for node:http.
 */
export async function postEmails(url: string, n: number, connections: number, payload: (i: number) => object = emailPayload): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port } = new URL(url);
  const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const request = http.request({ agent, hostname, port, path: '/emails', method: 'POST', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode === 200) resolve();
          else reject(new Error(`POST /emails answered ${response.statusCode}: ${Buffer.concat(chunks).toString()}`));
        });
      });
      request.on('error', reject);
      request.end(body);
    });
  let next = 0;
  const started = performance.now();
  const client = async () => {
    while (next < n) await post(JSON.stringify(payload(next++)));
  };
  try {
    await Promise.all(Array.from({ length: connections }, client));
  } finally {
    agent.destroy();
  }
  return n / ((performance.now() - started) / 1000);
}

/** Emails sent before each measured run, by the baseline and by Mailroom alike. */
export const WARM_UP = 2000;

export async function benchDelivery(options: { n: number; workers: number }): Promise<Figure[]> {
  const sink = await startSink();
  try {
    await nodemailerStraight(sink, WARM_UP);
    const straight = await nodemailerStraight(sink, options.n);

    const mailroom = await startMailroom({ role: options.workers > 0 ? 'api' : 'all', env: { SMTP_URL: sink.url, WORKER_CONCURRENCY: '64' }, workers: options.workers });
    try {
      // Warm-up, as for the baseline: a fresh process spends its first seconds compiling its code.
      sink.reset();
      await postEmails(mailroom.url, WARM_UP, 32);
      await waitForCount(sink, WARM_UP);
      sink.reset();
      const started = performance.now();
      const accepted = await postEmails(mailroom.url, options.n, 32);
      await waitForCount(sink, options.n);
      const endToEnd = options.n / ((performance.now() - started) / 1000);
      return [
        { name: 'nodemailer straight into the sink (baseline)', value: straight, unit: 'emails/s' },
        { name: options.workers > 0 ? `Mailroom end to end (API + ${options.workers} worker processes)` : 'Mailroom end to end (one process)', value: endToEnd, unit: 'emails/s' },
        { name: 'Mailroom end to end / baseline', value: endToEnd / straight, unit: 'ratio' },
        { name: 'POST /emails accept rate during the run', value: accepted, unit: 'emails/s' },
      ];
    } finally {
      await mailroom.stop();
    }
  } finally {
    sink.close();
  }
}
