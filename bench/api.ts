// API throughput with autocannon, in one run: (a) a bare Fastify route answering {id}, the ceiling;
// (b) POST /emails with a typical 1 KB payload; (c) POST /emails/batch with 100 emails per request.
import { fork } from 'node:child_process';
import autocannon from 'autocannon';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** About 1 KB of JSON, as a typical transactional email. */
const typical = {
  from: 'Acme <orders@example.com>',
  to: ['customer@example.com'],
  subject: 'Your order #1234 has shipped',
  html: `<p>Hi Jane,</p><p>${'Your order is on its way and should arrive within three working days. '.repeat(8)}</p>`,
  text: 'Hi Jane, your order is on its way and should arrive within three working days.',
  tags: [{ name: 'category', value: 'shipping' }],
  headers: { 'X-Entity-Ref-ID': '1234' },
};

async function load(url: string, body: string, connections: number): Promise<autocannon.Result> {
  await autocannon({ url, method: 'POST', connections, duration: 2, body, headers: headers() }); // warm-up
  const result = await autocannon({ url, method: 'POST', connections, duration: DURATION_S, body, headers: headers() });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

function headers() {
  return { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
}

async function startBare(): Promise<{ address: string; stop(): void }> {
  const child = fork(new URL('./bare-server.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] });
  const address = await new Promise<string>((resolve) => child.once('message', (m: { address: string }) => resolve(m.address)));
  return { address, stop: () => child.kill() };
}

interface Round {
  ceiling: autocannon.Result;
  single: autocannon.Result;
  ratio: number;
}

export async function benchApi(): Promise<Figure[]> {
  const body = JSON.stringify(typical);
  const bare = await startBare();
  // The API alone (--role api): the worker would otherwise deliver on the same cores during the run.
  const mailroom = await startMailroom({ role: 'api' });
  try {
    // (a) and (b) take turns, and each (b) is divided by the (a) just before it: on a shared virtual
    // machine the speed of both drifts by 10-20% within a minute, and a pair measured together shares it.
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const ceiling = await load(`${bare.address}/emails`, body, 32);
      const single = await load(`${mailroom.url}/emails`, body, 32);
      rounds.push({ ceiling, single, ratio: single.requests.average / ceiling.requests.average });
    }
    const batch = await load(`${mailroom.url}/emails/batch`, JSON.stringify(Array.from({ length: 100 }, () => typical)), 8);
    const median = [...rounds].sort((x, y) => x.ratio - y.ratio)[Math.floor(rounds.length / 2)]!;
    return [
      { name: `(a) bare Fastify route, ${body.length} B body, 32 connections`, value: median.ceiling.requests.average, unit: 'req/s' },
      { name: '(a) p99 latency', value: median.ceiling.latency.p99, unit: 'ms' },
      { name: '(b) POST /emails, 32 connections', value: median.single.requests.average, unit: 'req/s' },
      { name: '(b) p99 latency, worst round', value: Math.max(...rounds.map((r) => r.single.latency.p99)), unit: 'ms' },
      ...rounds.map((r, i) => ({ name: `(b) / (a), round ${i + 1}`, value: r.ratio, unit: 'ratio' })),
      { name: `(b) / (a), median of ${rounds.length} rounds`, value: median.ratio, unit: 'ratio' },
      { name: '(c) POST /emails/batch, 100 emails each, 8 connections', value: batch.requests.average * 100, unit: 'emails/s' },
      { name: '(c) p99 latency per batch', value: batch.latency.p99, unit: 'ms' },
    ];
  } finally {
    bare.stop();
    await mailroom.stop();
  }
}
