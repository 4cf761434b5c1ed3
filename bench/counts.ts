// The work PostgreSQL does for each thing Mailroom does, counted on the wire (test/support/pg-counter.ts): statements
// and round trips per email accepted one a request and in batches of 100, per email delivered with many
// in flight and alone, and per webhook post. An API process and a worker process, as `npm start`
// configures them, each talk to the database through a proxy of its own, so each is counted apart;
// what a process does in the background meanwhile (heartbeats, polls, request logs) counts too.
import { createServer } from 'node:http';
import type { Figure } from './delivery.ts';
import { postBatches, postEmails } from './delivery.ts';
import { BENCH_KEY, startMailroom, startWorkerProcess } from './mailroom.ts';
import { startPgCounter, type Counts, type PgCounter } from '../test/support/pg-counter.ts';
import { query } from './scale.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

const SECRET = 'bench-counts-secret-'.repeat(3);

/** What was counted per email: round trips, statements, and the statements most often run. */
interface PerEmail {
  roundTrips: number;
  statements: number;
  top: [string, number][];
}

function perEmail(before: Counts, after: Counts, n: number): PerEmail {
  const top = [...after.byText]
    .map(([text, count]): [string, number] => [text, (count - (before.byText.get(text) ?? 0)) / n])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 16);
  return { roundTrips: (after.roundTrips - before.roundTrips) / n, statements: (after.statements - before.statements) / n, top };
}

/** What `counter` saw during `work`, per `n`. */
async function per(counter: PgCounter, n: number, work: () => Promise<void>): Promise<PerEmail> {
  const before = counter.counts();
  await work();
  return perEmail(before, counter.counts(), n);
}

/** A webhook endpoint that counts the posts it gets. */
async function startReceiver() {
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, count: () => count, close: () => server.close() };
}

const until = async (check: () => Promise<boolean> | boolean) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
};

/** Once the sink has `total` messages and every send job has ended (its outcome committed). */
async function delivered(database: string, sink: Sink, total: number): Promise<void> {
  await waitForCount(sink, total);
  await until(async () => Number((await query(database, "select count(*) as n from jobs where task = 'send-email'")).rows[0].n) === 0);
}

/**
 * Delivers what the API queued (`total` in the sink once done), with the jobs made due at once after the
 * worker is up, so that its start is not counted: per email delivered.
 */
async function deliverQueued(database: string, worker: PgCounter, sink: Sink, total: number, n: number, env: Record<string, string>) {
  await query(database, "update jobs set run_at = run_at + 86400000 where task = 'send-email'");
  const stop = startWorkerProcess(worker.url, env);
  try {
    await until(async () => Number((await query(database, 'select count(*) as n from workers')).rows[0].n) > 0);
    const counted = await per(worker, n, async () => {
      await query(database, `update jobs set run_at = ${Date.now()} where task = 'send-email'; select pg_notify('mailroom_jobs', current_schema())`);
      await delivered(database, sink, total);
    });
    return { counted, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export async function benchCounts(options: { n: number }): Promise<Figure[]> {
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('bench counts runs on PostgreSQL: set BENCH_DATABASE_URL=postgres://user:password@host:5432/database');
  const { n } = options;
  const database = await postgresSchema(base, 'bench');
  const sink = await startSink();
  const receiver = await startReceiver();
  const [apiCounter, workerCounter] = [await startPgCounter(database.url), await startPgCounter(database.url)];
  const env = { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
  const api = await startMailroom({ databaseUrl: apiCounter.url, role: 'api', env });
  const stops: (() => Promise<void>)[] = [];
  try {
    await postEmails(api.url, 200, 8); // warm-up: pools, prepared statements
    await postBatches(api.url, 200, 2, 0);
    let total = 400;
    const one = await per(apiCounter, n, () => postEmails(api.url, n, 8).then(() => undefined));
    const batched = await per(apiCounter, n, () => postBatches(api.url, n, 4, 0));
    total += 2 * n;
    const many = await deliverQueued(database.url, workerCounter, sink, total, total, env);
    stops.push(many.stop);

    // Alone: one email at a time, each delivered before the next is posted.
    const alone = await per(workerCounter, 20, async () => {
      for (let i = 0; i < 20; i++) {
        await postEmails(api.url, 1, 1);
        await delivered(database.url, sink, ++total);
      }
    });

    // A webhook endpoint for email.delivered: what a delivery costs now, less what it cost before, is the post's.
    const created = await fetch(`${api.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: receiver.url, events: ['email.delivered'] }),
    });
    if (!created.ok) throw new Error(`POST /webhooks answered ${created.status}: ${await created.text()}`);
    await many.stop();
    stops.pop();
    await postBatches(api.url, n, 4, 0);
    total += n;
    const hooked = await deliverQueued(database.url, workerCounter, sink, total, n, env);
    stops.push(hooked.stop);
    const posted = await per(workerCounter, n, () => until(() => receiver.count() >= n));
    const webhook = {
      roundTrips: hooked.counted.roundTrips - many.counted.roundTrips + posted.roundTrips,
      statements: hooked.counted.statements - many.counted.statements + posted.statements,
      top: [],
    };
    const figures = (name: string, counts: PerEmail): Figure[] => [
      { name: `${name}: round trips`, value: counts.roundTrips, unit: 'per email' },
      { name: `${name}: statements`, value: counts.statements, unit: 'per email' },
      ...counts.top.map(([text, count]) => ({ name: `  ${text.slice(0, 54)}`, value: count, unit: 'per email' })),
    ];
    return [
      ...figures('accepted, POST /emails', one),
      ...figures('accepted, POST /emails/batch of 100', batched),
      ...figures(`delivered, ${total - n - 20} in flight together`, many.counted),
      ...figures('delivered alone', alone),
      ...figures('a webhook post, beside its delivery', webhook),
    ];
  } finally {
    await Promise.all(stops.map((stop) => stop()));
    await api.stop();
    await Promise.all([apiCounter.close(), workerCounter.close()]);
    sink.close();
    receiver.close();
    await database.drop();
  }
}
