// API throughput with autocannon, in one run: (a) a bare Fastify route answering {id}, the ceiling;
// (b) POST /emails with a typical 1 KB payload to Mailroom as `npm start` runs it (one process: the API,
// and the worker capturing every email beside it); (b') the same to an API process alone (--role api);
// (b'') the same to an API process alone with its request logs off (MAILROOM_API_LOGS=false): what
// recording every request for GET /logs costs is (b') / (b'');
// (c) POST /emails/batch with 100 emails per request, to the default process.
// With BENCH_DATABASE_URL (a PostgreSQL database; the bench works in a schema of its own and drops it):
// (d) POST /emails to an API process alone on PostgreSQL, and (d') the same with every request counted
// by a rate limit too high to refuse any (MAILROOM_RATE_LIMIT=1000000), in alternating turns.
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { startBare } from './bare-server.ts';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { median } from './stats.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 32);
const TURN_S = Number(process.env.BENCH_SECONDS ?? 1.5);

/** About 1 KB of JSON, as a typical transactional email. */
export const typical = {
  from: 'Acme <orders@example.com>',
  to: ['customer@example.com'],
  subject: 'Your order #1234 has shipped',
  html: `<p>Hi Jane,</p><p>${'Your order is on its way and should arrive within three working days. '.repeat(8)}</p>`,
  text: 'Hi Jane, your order is on its way and should arrive within three working days.',
  tags: [{ name: 'category', value: 'shipping' }],
  headers: { 'X-Entity-Ref-ID': '1234' },
};

async function load(url: string, body: string, connections: number, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({ url, method: 'POST', connections, duration: seconds, body, headers: headers() });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

const WARM_UP_S = 2;
const BATCH_S = 6;
const rate = (r: autocannon.Result) => r.requests.total / TURN_S;
const sorted = (values: number[]) => [...values].sort((x, y) => x - y);
const sum = (values: number[]) => values.reduce((x, y) => x + y, 0);

/**
 * A 95% interval for the ratio of (b)'s total to (a)'s, by resampling the pairs of turns (a percentile
 * bootstrap): how far the reported ratio could have fallen with other turns of the same machine.
 */
function ratioInterval(single: number[], ceiling: number[], resamples = 10_000): [number, number] {
  const ratios = Array.from({ length: resamples }, () => {
    let singleTotal = 0;
    let ceilingTotal = 0;
    for (let n = 0; n < single.length; n++) {
      const i = Math.floor(Math.random() * single.length);
      singleTotal += single[i]!;
      ceilingTotal += ceiling[i]!;
    }
    return singleTotal / ceilingTotal;
  });
  const order = sorted(ratios);
  return [order[Math.floor(resamples * 0.025)]!, order[Math.floor(resamples * 0.975)]!];
}

function headers() {
  return { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
}

interface Turn {
  ceiling: autocannon.Result;
  single: autocannon.Result;
  apiOnly: autocannon.Result;
  noLogs: autocannon.Result;
}

/** Resolves once a Mailroom on this SQLite file has no email left to send (the hourly retention job stays). */
async function drained(databaseUrl: string): Promise<void> {
  const db = new SQLite(databaseUrl, { readonly: true });
  try {
    const left = db.prepare("select count(*) as n from jobs where task = 'send-email'");
    while ((left.get() as { n: number }).n > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    db.close();
  }
}

/** A fresh schema on `base`, and the URL whose connections use it. */
async function createSchema(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `bench_${process.pid}_${Date.now()}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  await run(`create schema ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => run(`drop schema ${schema} cascade`) };
}

/**
 * (d) and (d'): the cost of counting every request against a key's limit shared through PostgreSQL;
 * and (d) against (b') on SQLite (`sqliteUrl`), their turns alternating with (d)'s.
 */
async function benchPostgres(base: string, body: string, sqliteUrl: string): Promise<Figure[]> {
  const schema = await createSchema(base);
  // PostgreSQL needs the secret every process shares.
  const secret = { MAILROOM_SECRET: 'bench-secret-bench-secret-bench-secret-0123' };
  const unlimited = await startMailroom({ role: 'api', databaseUrl: schema.url, env: secret });
  const limited = await startMailroom({ role: 'api', databaseUrl: schema.url, env: { ...secret, MAILROOM_RATE_LIMIT: '1000000' } });
  try {
    await load(`${unlimited.url}/emails`, body, 32, WARM_UP_S);
    await load(`${limited.url}/emails`, body, 32, WARM_UP_S);
    const plain: number[] = [];
    const counted: number[] = [];
    const sqlite: number[] = [];
    let worstP99 = 0;
    for (let i = 0; i < TURNS; i++) {
      const order = i % 2 === 0 ? [unlimited.url, limited.url, sqliteUrl] : [sqliteUrl, limited.url, unlimited.url];
      for (const url of order) {
        const result = await load(`${url}/emails`, body, 32, TURN_S);
        (url === limited.url ? counted : url === unlimited.url ? plain : sqlite).push(rate(result));
        if (url === limited.url) worstP99 = Math.max(worstP99, result.latency.p99);
      }
    }
    const [low, high] = ratioInterval(counted, plain);
    const [sqliteLow, sqliteHigh] = ratioInterval(plain, sqlite);
    return [
      { name: "(b') --role api on SQLite, in turns with (d)", value: sum(sqlite) / TURNS, unit: 'req/s' },
      { name: "(d) / (b'), PostgreSQL / SQLite", value: sum(plain) / sum(sqlite), unit: 'ratio' },
      { name: "(d) / (b'), 95% interval, low end", value: sqliteLow, unit: 'ratio' },
      { name: "(d) / (b'), 95% interval, high end", value: sqliteHigh, unit: 'ratio' },
      { name: '(d) POST /emails, --role api on PostgreSQL, 32 connections', value: sum(plain) / TURNS, unit: 'req/s' },
      { name: "(d') the same with MAILROOM_RATE_LIMIT=1000000", value: sum(counted) / TURNS, unit: 'req/s' },
      { name: "(d') p99 latency, worst turn", value: worstP99, unit: 'ms' },
      { name: `(d') / (d), ${TURNS} turns of ${TURN_S} s each`, value: sum(counted) / sum(plain), unit: 'ratio' },
      { name: "(d') / (d), 95% interval, low end", value: low, unit: 'ratio' },
      { name: "(d') / (d), 95% interval, high end", value: high, unit: 'ratio' },
    ];
  } finally {
    await unlimited.stop();
    await limited.stop();
    await schema.drop();
  }
}

export async function benchApi(): Promise<Figure[]> {
  const body = JSON.stringify(typical);
  const bare = await startBare();
  const mailroom = await startMailroom({});
  const apiOnly = await startMailroom({ role: 'api' });
  const noLogs = await startMailroom({ role: 'api', env: { MAILROOM_API_LOGS: 'false' } });
  const ceilingUrl = `${bare.address}/emails`;
  const singleUrl = `${mailroom.url}/emails`;
  const apiOnlyUrl = `${apiOnly.url}/emails`;
  const noLogsUrl = `${noLogs.url}/emails`;
  try {
    await load(ceilingUrl, body, 32, WARM_UP_S);
    await load(singleUrl, body, 32, WARM_UP_S);
    await load(apiOnlyUrl, body, 32, WARM_UP_S);
    await load(noLogsUrl, body, 32, WARM_UP_S);
    // (a) and (b) take short turns, in alternating order, and the ratio is of their totals: this shared
    // virtual machine's speed swings by up to 2x from one second to the next (the bare route alone
    // measures anywhere from 55k to 110k req/s), and turns of a second and a half see the same swings.
    const turns: Turn[] = [];
    const kinds = ['ceiling', 'single', 'apiOnly', 'noLogs'] as const;
    const urls = { ceiling: ceilingUrl, single: singleUrl, apiOnly: apiOnlyUrl, noLogs: noLogsUrl };
    for (let i = 0; i < TURNS; i++) {
      // Each turn runs the three in another order, so that none is always first after the same one.
      const order = kinds.map((_, k) => kinds[(k + i) % kinds.length]!);
      const turn = {} as Turn;
      for (const kind of order) {
        turn[kind] = await load(urls[kind], body, 32, TURN_S);
        // The default process accepts faster than its worker captures: let it catch up before the next
        // load, or its backlog would run on the cores during the others' turns.
        if (kind === 'single') await drained(mailroom.databaseUrl);
      }
      turns.push(turn);
    }
    const batchBody = JSON.stringify(Array.from({ length: 100 }, () => typical));
    await load(`${mailroom.url}/emails/batch`, batchBody, 8, WARM_UP_S);
    const batch = await load(`${mailroom.url}/emails/batch`, batchBody, 8, BATCH_S);
    const ceiling = turns.map((t) => rate(t.ceiling));
    const single = turns.map((t) => rate(t.single));
    const [low, high] = ratioInterval(single, ceiling);
    const pairs = single.map((value, i) => value / ceiling[i]!);
    const alone = turns.map((t) => rate(t.apiOnly));
    const [aloneLow, aloneHigh] = ratioInterval(alone, ceiling);
    const unlogged = turns.map((t) => rate(t.noLogs));
    const [loggedLow, loggedHigh] = ratioInterval(alone, unlogged);
    const postgres = process.env.BENCH_DATABASE_URL ? await benchPostgres(process.env.BENCH_DATABASE_URL, body, apiOnly.url) : [];
    return [
      { name: `(a) bare Fastify route, ${body.length} B body, 32 connections`, value: sum(ceiling) / TURNS, unit: 'req/s' },
      { name: '(a) slowest turn', value: Math.min(...ceiling), unit: 'req/s' },
      { name: '(a) fastest turn', value: Math.max(...ceiling), unit: 'req/s' },
      { name: '(b) POST /emails, 32 connections', value: sum(single) / TURNS, unit: 'req/s' },
      { name: '(b) slowest turn', value: Math.min(...single), unit: 'req/s' },
      { name: '(b) fastest turn', value: Math.max(...single), unit: 'req/s' },
      { name: '(b) p99 latency, worst turn', value: Math.max(...turns.map((t) => t.single.latency.p99)), unit: 'ms' },
      { name: `(b) / (a), ${TURNS} turns of ${TURN_S} s each`, value: sum(single) / sum(ceiling), unit: 'ratio' },
      { name: '(b) / (a), 95% interval, low end', value: low, unit: 'ratio' },
      { name: '(b) / (a), 95% interval, high end', value: high, unit: 'ratio' },
      { name: '(b) / (a), lowest pair of turns', value: Math.min(...pairs), unit: 'ratio' },
      { name: '(b) / (a), median pair of turns', value: median(pairs), unit: 'ratio' },
      { name: '(b) / (a), highest pair of turns', value: Math.max(...pairs), unit: 'ratio' },
      { name: "(b') POST /emails to --role api alone, 32 connections", value: sum(alone) / TURNS, unit: 'req/s' },
      { name: "(b') / (a)", value: sum(alone) / sum(ceiling), unit: 'ratio' },
      { name: "(b') / (a), 95% interval, low end", value: aloneLow, unit: 'ratio' },
      { name: "(b') / (a), 95% interval, high end", value: aloneHigh, unit: 'ratio' },
      { name: "(b'') the same with MAILROOM_API_LOGS=false", value: sum(unlogged) / TURNS, unit: 'req/s' },
      { name: "(b') / (b''), request logs on / off", value: sum(alone) / sum(unlogged), unit: 'ratio' },
      { name: "(b') / (b''), 95% interval, low end", value: loggedLow, unit: 'ratio' },
      { name: "(b') / (b''), 95% interval, high end", value: loggedHigh, unit: 'ratio' },
      { name: '(c) POST /emails/batch, 100 emails each, 8 connections', value: (batch.requests.total * 100) / BATCH_S, unit: 'emails/s' },
      { name: '(c) p99 latency per batch', value: batch.latency.p99, unit: 'ms' },
      ...postgres,
    ];
  } finally {
    bare.stop();
    await mailroom.stop();
    await apiOnly.stop();
    await noLogs.stop();
  }
}
