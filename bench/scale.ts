// Scale-out on PostgreSQL: the delivery rate of 1, 2 and 4 worker processes sharing one database, each
// against the rate of one worker in the same run. The emails are queued first with their jobs held back;
// once every worker is up, one UPDATE makes them all due and one NOTIFY wakes the workers, and the
// clock runs until the sink has them all.
import pg from 'pg';
import type { Figure } from './delivery.ts';
import { postBatches } from './delivery.ts';
import { startMailroom, startWorkerProcess } from './mailroom.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

const WORKERS = [1, 2, 4];
const SECRET = 'bench-scale-secret-'.repeat(3);

/** Runs `sql` on the database at `url`. */
export async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** n emails queued by an API process, their jobs held a day back; resolves once they are committed. */
async function queue(databaseUrl: string, n: number, sink: Sink): Promise<void> {
  const api = await startMailroom({ databaseUrl, role: 'api', env: { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET } });
  try {
    await postBatches(api.url, n, 8, 0);
  } finally {
    await api.stop();
  }
  await query(databaseUrl, `update jobs set run_at = run_at + 86400000`);
}

/** The rate (emails a second) at which `workers` processes deliver n queued emails. */
async function deliver(base: string, n: number, workers: number, sink: Sink): Promise<number> {
  const database = await postgresSchema(base, 'bench');
  const stops: (() => Promise<void>)[] = [];
  try {
    await queue(database.url, n, sink);
    const env = { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET };
    for (let i = 0; i < workers; i++) stops.push(startWorkerProcess(database.url, env));
    while (Number((await query(database.url, 'select count(*) as n from workers')).rows[0].n) < workers) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sink.reset();
    const started = performance.now();
    await query(database.url, `update jobs set run_at = ${Date.now()}; select pg_notify('mailroom_jobs', current_schema())`);
    await waitForCount(sink, n);
    return n / ((performance.now() - started) / 1000);
  } finally {
    await Promise.all(stops.map((stop) => stop()));
    await database.drop();
  }
}

export async function benchScale(options: { n: number }): Promise<Figure[]> {
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('bench scale runs on PostgreSQL: set BENCH_DATABASE_URL=postgres://user:password@host:5432/database');
  const sink = await startSink();
  try {
    await deliver(base, 2000, 1, sink); // warm-up: the server's caches, the OS's files
    const rates = new Map<number, number>();
    for (const workers of WORKERS) rates.set(workers, await deliver(base, options.n, workers, sink));
    const one = rates.get(1)!;
    return [
      ...WORKERS.map((workers) => ({ name: `delivered with ${workers} worker process${workers > 1 ? 'es' : ''}`, value: rates.get(workers)!, unit: 'emails/s' })),
      ...WORKERS.slice(1).map((workers) => ({ name: `${workers} workers / 1 worker`, value: rates.get(workers)! / one, unit: 'ratio' })),
    ];
  } finally {
    sink.close();
  }
}
