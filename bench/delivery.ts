// End-to-end delivery: emails accepted over the API and delivered into a local SMTP sink, against
// nodemailer's own rate composing and sending the same messages straight into that sink.
import http from 'node:http';
import nodemailer from 'nodemailer';
import { startBare } from './bare-server.ts';
import { cpuMs } from './cpu.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { emailPayload, html, text } from './payload.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { median } from './stats.ts';
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

/** What a turn measures beside the baseline: its name, its rate over n emails into the sink, and its process's CPU per email. */
interface Contender {
  name: string;
  run(): Promise<{ rate: number; cpuPerEmail: number }>;
}

/** Posts the warm-up one a request and waits for it in the sink: a fresh process first spends seconds compiling its code. */
async function warmUp(sink: Sink, url: string): Promise<void> {
  sink.reset();
  await postEmails(url, WARM_UP, 32);
  await waitForCount(sink, WARM_UP);
}

/** Posting n emails to `server` (its pid measured), one a request and (with `batches`) in batches of 100, each timed until all are in the sink. */
function contenders(sink: Sink, n: number, server: { url: string; pid: number }, name: string, batches: boolean): Contender[] {
  let offset = 0;
  const timed = async (post: () => Promise<unknown>) => {
    sink.reset();
    const run = await measured(n, [server.pid], async () => {
      await post();
      await waitForCount(sink, n);
    });
    return { rate: run.rate, cpuPerEmail: run.cpuPerEmail[0]! };
  };
  const single = { name: `${name}, one email a request, 32 in flight`, run: () => timed(() => postEmails(server.url, n, 32)) };
  const batched = { name: `${name}, batches of 100, 4 in flight`, run: () => timed(() => postBatches(server.url, n, 4, (offset += n))) };
  return batches ? [single, batched] : [single];
}

/**
 * `turns` turns, each the baseline then every contender after it: the baseline's median rate and CPU
 * per email, then each contender's median rate, the median of its turns' ratios to their baseline
 * with the lowest and highest, and its process's median CPU per email.
 */
async function inTurns(sink: Sink, n: number, turns: number, all: Contender[]): Promise<{ figures: Figure[]; straightCpu: number }> {
  const straight: number[] = [];
  const straightCpu: number[] = [];
  const runs = all.map(() => [] as { rate: number; cpuPerEmail: number }[]);
  for (let turn = 0; turn < turns; turn++) {
    const cpuBefore = process.cpuUsage();
    straight.push(await nodemailerStraight(sink, n));
    const cpu = process.cpuUsage(cpuBefore);
    straightCpu.push((cpu.user + cpu.system) / 1000 / n);
    for (const [i, contender] of all.entries()) runs[i]!.push(await contender.run());
  }
  const figures: Figure[] = [{ name: `nodemailer straight into the sink (baseline), median of ${turns} turns`, value: median(straight), unit: 'emails/s' }];
  for (const [i, contender] of all.entries()) {
    const ratios = runs[i]!.map((run, turn) => run.rate / straight[turn]!);
    figures.push(
      { name: contender.name, value: median(runs[i]!.map((run) => run.rate)), unit: 'emails/s' },
      { name: '  / baseline, median of the turns', value: median(ratios), unit: 'ratio' },
      { name: '  / baseline, lowest turn', value: Math.min(...ratios), unit: 'ratio' },
      { name: '  / baseline, highest turn', value: Math.max(...ratios), unit: 'ratio' },
      { name: '  its process\'s CPU per email', value: median(runs[i]!.map((run) => run.cpuPerEmail)), unit: 'ms' },
    );
  }
  return { figures, straightCpu: median(straightCpu) };
}

/**
 * End to end with the defaults (`npm start` with SMTP_URL: one process, API and worker), on SQLite and,
 * with BENCH_DATABASE_URL, PostgreSQL: emails posted one a request (32 in flight) and in batches of 100
 * (4 in flight), timed from the first request to the last delivery, against nodemailer sending the same
 * messages straight into the same sink, and beside the ceiling: a bare route that relays them and
 * stores nothing (what accepting over HTTP alone costs). Each is measured in every turn
 * (`BENCH_TURNS`, 5) after that turn's baseline: the machine drifts by more than a tenth within
 * minutes. Then the CPU each email costs in an API process and a worker process apart (the worker's
 * path: claim, compose, send, record), beside nodemailer's own.
 */
export async function benchDelivery(options: { n: number }): Promise<Figure[]> {
  const sink = await startSink();
  const { n } = options;
  const stops: (() => Promise<void> | void)[] = [() => sink.close()];
  try {
    const bare = await startBare(sink.url);
    stops.push(() => bare.stop());
    const servers = [{ url: bare.address, pid: bare.pid }];
    const all = contenders(sink, n, servers[0]!, 'Ceiling: a bare route relaying through nodemailer, storing nothing', false);
    const sqlite = await startMailroom({ env: { SMTP_URL: sink.url } });
    stops.push(() => sqlite.stop());
    servers.push(sqlite);
    all.push(...contenders(sink, n, sqlite, 'Mailroom end to end on SQLite', true));
    const base = process.env.BENCH_DATABASE_URL;
    if (base) {
      const postgres = await postgresSchema(base, 'bench');
      stops.push(() => postgres.drop());
      const mailroom = await startMailroom({ env: { SMTP_URL: sink.url, MAILROOM_SECRET: 'bench-delivery-secret-'.repeat(3) }, databaseUrl: postgres.url });
      stops.push(() => mailroom.stop());
      servers.push(mailroom);
      all.push(...contenders(sink, n, mailroom, 'Mailroom end to end on PostgreSQL', true));
    }
    await nodemailerStraight(sink, WARM_UP);
    for (const server of servers) await warmUp(sink, server.url);
    const { figures, straightCpu } = await inTurns(sink, n, Number(process.env.BENCH_TURNS ?? 5), all);
    return [...figures, ...(await cpuSplit(sink, n, straightCpu))];
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

/** The CPU each email costs an API process and a worker process of their own on one database, one a request, beside the baseline's. */
async function cpuSplit(sink: Sink, n: number, straightCpu: number): Promise<Figure[]> {
  const split = await startMailroom({ role: 'api', workers: 1, env: { SMTP_URL: sink.url } });
  try {
    await warmUp(sink, split.url);
    sink.reset();
    const run = await measured(n, split.pids, async () => {
      await postEmails(split.url, n, 32);
      await waitForCount(sink, n);
    });
    const [api, worker] = run.cpuPerEmail as [number, number];
    return [
      { name: 'CPU per email, API process (accept and store)', value: api, unit: 'ms' },
      { name: 'CPU per email, worker process (claim, compose, send, record)', value: worker, unit: 'ms' },
      { name: 'CPU per email, nodemailer straight (baseline)', value: straightCpu, unit: 'ms' },
      { name: 'CPU per email, worker / baseline', value: worker / straightCpu, unit: 'ratio' },
    ];
  } finally {
    await split.stop();
  }
}
