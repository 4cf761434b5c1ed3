// Scale-out on PostgreSQL: the delivery rate of 1, 2 and 4 worker processes sharing one database, each
// against the rate of one worker in the same run, into two sinks: one that answers at once (the bound
// is CPU) and one that answers each message 100 to 300 ms later, to 200 recipient domains (the bound is
// latency, as on the internet). The emails are queued first with their jobs held back; once every
// worker is up and warm, one UPDATE makes them all due and one NOTIFY wakes the workers, and the clock
// runs until the sink has them all. Meanwhile pg_stat_activity is read for each process's connections.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuMs } from './cpu.ts';
import type { Figure } from './delivery.ts';
import { postBatches } from './delivery.ts';
import { startMailroom, startWorkerProcess } from './mailroom.ts';
import { emailPayload } from './payload.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

const WORKERS = [1, 2, 4];
const SECRET = 'bench-scale-secret-'.repeat(3);
const DOMAINS = 200;
const LATENCY_MS = { least: 100, most: 300 };
const WARM_UP_PER_WORKER = 500;

/** The i-th email, to a recipient on one of DOMAINS domains. */
const spreadPayload = (i: number) => ({ ...emailPayload(i), to: [`customer${i}@shop${i % DOMAINS}.example.com`] });

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

/** The machine's busy and total CPU time so far (/proc/stat's first line, in ticks). */
function machineTicks(): { busy: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = ticks[3]! + ticks[4]!; // idle and iowait
  const total = ticks.reduce((sum, t) => sum + t, 0);
  return { busy: total - idle, total };
}

/** A process's CPU time so far (cpu.ts), or undefined once it has ended. */
function cpuMsIfAny(pid: number): number | undefined {
  try {
    return cpuMs(pid);
  } catch {
    return undefined;
  }
}

/**
 * Reads pg_stat_activity every 200 ms until stop(): the most connections each application name of
 * `names` held at once (every worker process names its connections through PGAPPNAME, which pg reads),
 * and the CPU their server backends used meanwhile, when the server runs on this machine (else NaN:
 * a backend's pid would name some other process here).
 */
async function watchDatabase(base: string, names: string[]): Promise<{ stop(): Promise<{ connections: number[]; backendCpuMs: number }> }> {
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(new URL(base).hostname);
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  const peaks = new Map(names.map((name) => [name, 0]));
  const backends = new Map<number, { first: number; last: number }>();
  let reading = true;
  const read = (async () => {
    while (reading) {
      const { rows } = await client.query<{ name: string; pid: number }>('select application_name as name, pid from pg_stat_activity where application_name = any($1)', [names]);
      for (const name of names) peaks.set(name, Math.max(peaks.get(name)!, rows.filter((row) => row.name === name).length));
      for (const { pid } of local ? rows : []) {
        const now = cpuMsIfAny(pid);
        if (now === undefined) continue;
        const backend = backends.get(pid);
        if (backend) backend.last = now;
        else backends.set(pid, { first: now, last: now });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      reading = false;
      await read;
      await client.end();
      let backendCpuMs = local ? 0 : NaN;
      for (const [pid, backend] of backends) backendCpuMs += (cpuMsIfAny(pid) ?? backend.last) - backend.first;
      return { connections: names.map((name) => peaks.get(name)!), backendCpuMs };
    },
  };
}

/** n emails queued by an API process, their jobs held a day back; resolves once they are committed. */
async function queue(databaseUrl: string, n: number, sink: Sink, payload: (i: number) => object): Promise<void> {
  const api = await startMailroom({ databaseUrl, role: 'api', env: { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET } });
  try {
    await postBatches(api.url, n, 8, 0, payload);
  } finally {
    await api.stop();
  }
  await query(databaseUrl, `update jobs set run_at = run_at + 86400000 where task = 'send-email'`);
}

/** Makes due the held send-email jobs that `where` picks, and wakes the workers. */
async function makeDue(databaseUrl: string, where: string): Promise<void> {
  await query(databaseUrl, `update jobs set run_at = ${Date.now()} where task = 'send-email' and ${where}; select pg_notify('mailroom_jobs', current_schema())`);
}

interface Run {
  /** Emails delivered a second. */
  rate: number;
  seconds: number;
  /** The most PostgreSQL connections each worker process held at once. */
  connections: number[];
  /** The CPU each worker process used, in cores (1 = a whole core through the run). */
  workerCores: number[];
  /** The CPU of the database's backends serving the workers, in cores (NaN when the server is on another machine). */
  databaseCores: number;
  /** The share of the machine's CPU busy through the run, every process on it included. */
  machineBusy: number;
}

/**
 * How `workers` processes deliver n queued emails (the i-th `payload(i)`) into `sink`, once they have
 * delivered WARM_UP_PER_WORKER each: a fresh process spends its first seconds compiling its code.
 */
async function deliver(base: string, n: number, workers: number, sink: Sink, payload: (i: number) => object): Promise<Run> {
  const database = await postgresSchema(base, 'bench');
  const stops: ReturnType<typeof startWorkerProcess>[] = [];
  const names = Array.from({ length: workers }, (_, i) => `mailroom-bench-${randomBytes(3).toString('hex')}-worker-${i + 1}`);
  const warm = WARM_UP_PER_WORKER * workers;
  try {
    await queue(database.url, warm + n, sink, payload);
    for (const name of names) stops.push(startWorkerProcess(database.url, { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET, PGAPPNAME: name }));
    while (Number((await query(database.url, 'select count(*) as n from workers')).rows[0].n) < workers) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sink.reset();
    await makeDue(database.url, `id in (select id from jobs where task = 'send-email' limit ${warm})`);
    await waitForCount(sink, warm);
    const watch = await watchDatabase(base, names);
    sink.reset();
    const cpuBefore = stops.map((stop) => cpuMs(stop.pid));
    const machineBefore = machineTicks();
    const started = performance.now();
    await makeDue(database.url, 'true');
    await waitForCount(sink, n);
    const ms = performance.now() - started;
    const machine = machineTicks();
    const { connections, backendCpuMs } = await watch.stop();
    return {
      rate: n / (ms / 1000),
      seconds: ms / 1000,
      connections,
      databaseCores: backendCpuMs / ms,
      workerCores: stops.map((stop, i) => (cpuMs(stop.pid) - cpuBefore[i]!) / ms),
      machineBusy: (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total),
    };
  } finally {
    await Promise.all(stops.map((stop) => stop()));
    await database.drop();
  }
}

/** 1, 2 and 4 workers into `sink`: each one's rate and connections, and the ratios to one worker. */
async function scaleInto(base: string, n: number, sink: Sink, payload: (i: number) => object, label: string): Promise<Figure[]> {
  const runs = new Map<number, Run>();
  for (const workers of WORKERS) {
    const run = await deliver(base, n, workers, sink, payload);
    runs.set(workers, run);
    const cores = run.workerCores.map((c) => c.toFixed(2)).join(', ');
    const perEmail = (used: number) => ((used * run.seconds * 1000) / n).toFixed(2);
    const workersCores = run.workerCores.reduce((sum, c) => sum + c, 0);
    console.log(
      `  ${label}, ${workers} worker(s): ${Math.round(run.rate)}/s in ${run.seconds.toFixed(1)} s; connections ${run.connections.join(', ')}; ` +
        `CPU in cores: workers ${cores}, their database backends ${run.databaseCores.toFixed(2)}; machine ${(run.machineBusy * 100).toFixed(0)}% busy; ` +
        `CPU ms an email: workers ${perEmail(workersCores)}, database ${perEmail(run.databaseCores)}`,
    );
  }
  const one = runs.get(1)!.rate;
  return [
    ...WORKERS.map((workers) => ({ name: `${label}: ${workers} worker process${workers > 1 ? 'es' : ''}`, value: runs.get(workers)!.rate, unit: 'emails/s' })),
    ...WORKERS.slice(1).map((workers) => ({ name: `${label}: ${workers} workers / 1 worker`, value: runs.get(workers)!.rate / one, unit: 'ratio' })),
    ...WORKERS.map((workers) => ({
      name: `${label}: connections held, ${workers} worker${workers > 1 ? 's' : ''} (each: ${runs.get(workers)!.connections.join(', ')})`,
      value: Math.max(...runs.get(workers)!.connections),
      unit: 'most a process',
    })),
  ];
}

export async function benchScale(options: { n: number }): Promise<Figure[]> {
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('bench scale runs on PostgreSQL: set BENCH_DATABASE_URL=postgres://user:password@host:5432/database');
  const figures: Figure[] = [];
  const instant = await startSink();
  try {
    await deliver(base, 2000, 1, instant, emailPayload); // warm-up: the database server's caches, the OS's files
    figures.push(...(await scaleInto(base, options.n, instant, emailPayload, 'CPU-bound (instant sink)')));
  } finally {
    instant.close();
  }
  const slow = await startSink(LATENCY_MS);
  try {
    figures.push(...(await scaleInto(base, options.n, slow, spreadPayload, `latency (${LATENCY_MS.least}-${LATENCY_MS.most} ms, ${DOMAINS} domains)`)));
  } finally {
    slow.close();
  }
  return figures;
}
