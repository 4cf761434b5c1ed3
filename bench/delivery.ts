// End-to-end delivery: emails accepted over the API and delivered into a local SMTP sink, against
// nodemailer's own rate composing and sending the same messages straight into that sink.
import http from 'node:http';
import nodemailer from 'nodemailer';
import { startBare } from './bare-server.ts';
import { cpuMs } from './cpu.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { emailPayload, html, text } from './payload.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

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
      await transport.sendMail({ from: p.from, to: p.to, subject: p.subject, html, text });
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
export function postEmails(url: string, n: number, connections: number, payload: (i: number) => object = emailPayload): Promise<number> {
  return postEach(url, '/emails', n, connections, payload);
}

/** Posts n JSON bodies to `path` as postEmails does, each answered with a 2xx; resolves with the accept rate. */
export async function postEach(url: string, path: string, n: number, connections: number, payload: (i: number) => object): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port } = new URL(url);
  const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const request = http.request({ agent, hostname, port, path, method: 'POST', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode! >= 200 && response.statusCode! < 300) resolve();
          else reject(new Error(`POST ${path} answered ${response.statusCode}: ${Buffer.concat(chunks).toString()}`));
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

const BATCH = 100;

/** Posts n emails (the i-th `payload(offset + i)`) to /emails/batch, `BATCH` a request, `inFlight` requests at once; resolves when all are accepted. */
export async function postBatches(url: string, n: number, inFlight: number, offset: number, payload: (i: number) => object = emailPayload): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const { hostname, port } = new URL(url);
  const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
  let next = 0;
  const client = async () => {
    while (next < n) {
      const first = next;
      next += BATCH;
      const body = JSON.stringify(Array.from({ length: Math.min(BATCH, n - first) }, (_, i) => payload(offset + first + i)));
      await new Promise<void>((resolve, reject) => {
        const request = http.request({ agent, hostname, port, path: '/emails/batch', method: 'POST', headers }, (response) => {
          response.resume();
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`POST /emails/batch answered ${response.statusCode}`))));
        });
        request.on('error', reject);
        request.end(body);
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, client));
  } finally {
    agent.destroy();
  }
}

/** Runs `work`, resolving with its rate over n emails, and the CPU each process of `pids` used per email. */
async function measured(n: number, pids: number[], work: () => Promise<void>): Promise<{ rate: number; cpuPerEmail: number[] }> {
  const before = pids.map(cpuMs);
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  return { rate: n / seconds, cpuPerEmail: pids.map((pid, i) => (cpuMs(pid) - before[i]!) / n) };
}

/**
 * The ceiling: a bare route that relays each email through nodemailer and stores nothing
 * (bare-server.ts), posted to as Mailroom is, one a request; resolves with its figures.
 */
async function bareRelay(sink: Sink, n: number, straight: number): Promise<Figure[]> {
  const bare = await startBare(sink.url);
  const url = bare.address;
  try {
    sink.reset();
    await postEmails(url, WARM_UP, 32);
    await waitForCount(sink, WARM_UP);
    sink.reset();
    const run = await measured(n, [bare.pid], async () => {
      await postEmails(url, n, 32);
      await waitForCount(sink, n);
    });
    return [
      { name: 'Ceiling: a bare route relaying through nodemailer, storing nothing, one a request', value: run.rate, unit: 'emails/s' },
      { name: '  / baseline', value: run.rate / straight, unit: 'ratio' },
      { name: '  its CPU per email', value: run.cpuPerEmail[0]!, unit: 'ms' },
    ];
  } finally {
    bare.stop();
  }
}

/** `npm start` with SMTP_URL (one process, API and worker) on SQLite or `databaseUrl`, one a request then in batches, beside the baseline's rate. */
async function endToEnd(sink: Sink, n: number, straight: number, database: string, databaseUrl?: string): Promise<Figure[]> {
  const env = { SMTP_URL: sink.url, ...(databaseUrl ? { MAILROOM_SECRET: 'bench-delivery-secret-'.repeat(3) } : {}) };
  const mailroom = await startMailroom({ env, databaseUrl });
  try {
    // Warm-up, as for the baseline: a fresh process spends its first seconds compiling its code.
    sink.reset();
    await postEmails(mailroom.url, WARM_UP, 32);
    await waitForCount(sink, WARM_UP);
    sink.reset();
    const single = await measured(n, [], async () => {
      await postEmails(mailroom.url, n, 32);
      await waitForCount(sink, n);
    });
    sink.reset();
    const batched = await measured(n, [], async () => {
      await postBatches(mailroom.url, n, 4, n);
      await waitForCount(sink, n);
    });
    return [
      { name: `Mailroom end to end on ${database}, one email a request, 32 in flight`, value: single.rate, unit: 'emails/s' },
      { name: '  / baseline', value: single.rate / straight, unit: 'ratio' },
      { name: `Mailroom end to end on ${database}, batches of 100, 4 in flight`, value: batched.rate, unit: 'emails/s' },
      { name: '  / baseline', value: batched.rate / straight, unit: 'ratio' },
    ];
  } finally {
    await mailroom.stop();
  }
}

/**
 * End to end with the defaults (`npm start` with SMTP_URL: one process, API and worker): emails posted
 * one a request (32 in flight) and in batches of 100 (4 in flight), timed from the first request to the
 * last delivery, against nodemailer sending the same messages straight into the same sink, and beside
 * a bare route that relays them and stores nothing (what accepting over HTTP alone costs). Then the
 * CPU each email costs, in an API process and a worker process apart (the worker's path: claim,
 * compose, send, record), beside nodemailer's own.
 */
export async function benchDelivery(options: { n: number }): Promise<Figure[]> {
  const sink = await startSink();
  const { n } = options;
  const figures: Figure[] = [];
  try {
    await nodemailerStraight(sink, WARM_UP);
    const cpuBefore = process.cpuUsage();
    const straight = await nodemailerStraight(sink, n);
    const cpu = process.cpuUsage(cpuBefore);
    const straightCpu = (cpu.user + cpu.system) / 1000 / n;
    figures.push({ name: 'nodemailer straight into the sink (baseline)', value: straight, unit: 'emails/s' });
    figures.push(...(await bareRelay(sink, n, straight)));

    figures.push(...(await endToEnd(sink, n, straight, 'SQLite')));
    const base = process.env.BENCH_DATABASE_URL;
    if (base) {
      const postgres = await postgresSchema(base, 'bench');
      try {
        figures.push(...(await endToEnd(sink, n, straight, 'PostgreSQL', postgres.url)));
      } finally {
        await postgres.drop();
      }
    }

    // The CPU of each path, with the API and a worker in processes of their own on one database.
    const split = await startMailroom({ role: 'api', workers: 1, env: { SMTP_URL: sink.url } });
    try {
      sink.reset();
      await postEmails(split.url, WARM_UP, 32);
      await waitForCount(sink, WARM_UP);
      sink.reset();
      const run = await measured(n, split.pids, async () => {
        await postEmails(split.url, n, 32);
        await waitForCount(sink, n);
      });
      const [api, worker] = run.cpuPerEmail as [number, number];
      figures.push(
        { name: 'CPU per email, API process (accept and store)', value: api, unit: 'ms' },
        { name: 'CPU per email, worker process (claim, compose, send, record)', value: worker, unit: 'ms' },
        { name: 'CPU per email, nodemailer straight (baseline)', value: straightCpu, unit: 'ms' },
        { name: 'CPU per email, worker / baseline', value: worker / straightCpu, unit: 'ratio' },
      );
    } finally {
      await split.stop();
    }
    return figures;
  } finally {
    sink.close();
  }
}
