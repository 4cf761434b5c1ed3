// Broadcasts at scale: a segment of n contacts (imported through the API), then one broadcast to it
// sent with `send: true`. Measured: the fan-out (from the request until the broadcast is `sent`, every
// email and send job committed), then the delivery of its emails into a local SMTP sink beside nodemailer
// sending straight into it, and the memory the fan-out adds to the Mailroom process's peak, at n / 5, n
// and 2n contacts, to show that it does not grow with the segment.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, buildCsv, importThroughApi } from './contacts.ts';
import { nodemailerStraight, WARM_UP, type Figure } from './delivery.ts';
import { startMailroom } from './mailroom.ts';
import { html } from './payload.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { median } from './stats.ts';

const json = (body: object): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The process's peak resident memory so far (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return kb / 1024;
}

interface FanOut {
  ms: number;
  idleMb: number;
  peakMb: number;
}

/** A database holding a segment of n contacts, imported through the API; resolves with its segment's id. */
async function importSegment(databaseUrl: string, n: number): Promise<string> {
  const importer = await startMailroom({ databaseUrl });
  try {
    const segment = (await api(importer.url, '/segments', json({ name: 'bench' }))).id;
    await importThroughApi(importer.url, buildCsv(n), segment);
    return segment;
  } finally {
    await importer.stop();
  }
}

/**
 * Sends a broadcast to the segment from a fresh process whose worker runs one job at a time, so that
 * the fan-out runs alone: its time until the broadcast is `sent`, and the process's memory before and
 * at that moment (not the import's, which ran in another process).
 */
async function fanOut(databaseUrl: string, segment: string, sink: Sink): Promise<FanOut> {
  const mailroom = await startMailroom({ databaseUrl, env: { SMTP_URL: sink.url, WORKER_CONCURRENCY: '1' } });
  try {
    const idleMb = peakRssMb(mailroom.pid);
    const started = performance.now();
    const { id } = await api(mailroom.url, '/broadcasts', json({
      segment_id: segment,
      from: 'Acme <news@example.com>',
      subject: 'News for {{{contact.first_name|you}}}',
      html: html.replace('<h1>Your order</h1>', '<h1>Hello {{{FIRST_NAME|there}}}</h1><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>'),
      send: true,
    }));
    while ((await api(mailroom.url, `/broadcasts/${id}`)).status !== 'sent') await new Promise((resolve) => setTimeout(resolve, 20));
    return { ms: performance.now() - started, idleMb, peakMb: peakRssMb(mailroom.pid) };
  } finally {
    await mailroom.stop();
  }
}

/** Delivers the broadcast's emails still pending, as `npm start` would; resolves with the rate. */
async function deliver(databaseUrl: string, n: number, sink: Sink): Promise<number> {
  const mailroom = await startMailroom({ databaseUrl, env: { SMTP_URL: sink.url } });
  try {
    const before = await sink.count();
    const started = performance.now();
    await waitForCount(sink, n);
    return ((n - before) / (performance.now() - started)) * 1000;
  } finally {
    await mailroom.stop();
  }
}

async function withDatabase<T>(run: (databaseUrl: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
  try {
    return await run(join(dir, 'mailroom.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ROUNDS = 3;

/**
 * ROUNDS fan-outs to a segment of n, each on a database of its own: the median time, and the least and
 * most memory the fan-out added, for a single run's peak depends on when V8 collects. A most far above
 * the least is worth a look: that is how V8 pretenuring the fan-out's rows showed (docs/decisions.md, broadcasts).
 */
async function fanOuts(n: number, sink: Sink) {
  const runs: FanOut[] = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await withDatabase(async (db) => fanOut(db, await importSegment(db, n), sink)));
  const added = runs.map((run) => run.peakMb - run.idleMb);
  return { ms: median(runs.map((run) => run.ms)), idleMb: median(runs.map((run) => run.idleMb)), leastMb: Math.min(...added), mostMb: Math.max(...added) };
}

export async function benchBroadcasts(options: { n: number }): Promise<Figure[]> {
  const sink = await startSink();
  try {
    await nodemailerStraight(sink, WARM_UP);
    const straight = await nodemailerStraight(sink, Math.min(options.n, 10_000));
    const sizes = [Math.round(options.n / 5), options.n, options.n * 2];
    const memory = [];
    for (const n of sizes) memory.push({ n, ...(await fanOuts(n, sink)) });
    const large = memory[1]!;
    const delivered = await withDatabase(async (db) => {
      const segment = await importSegment(db, options.n);
      sink.reset(); // the fan-out's process may deliver a few before it stops: deliver() counts from there
      await fanOut(db, segment, sink);
      return deliver(db, options.n, sink);
    });
    const label = (n: number) => n.toLocaleString('en-US');
    return [
      { name: `fan-out of ${label(options.n)}, request to sent (median of ${ROUNDS}; target < 15 s)`, value: large.ms, unit: 'ms' },
      { name: 'fan-out rate (emails + send jobs committed)', value: (options.n / large.ms) * 1000, unit: 'emails/s' },
      { name: 'nodemailer straight into the sink (baseline)', value: straight, unit: 'emails/s' },
      { name: `Mailroom delivering the broadcast into the sink, ${label(options.n)}`, value: delivered, unit: 'emails/s' },
      { name: 'Mailroom broadcast delivery / baseline', value: delivered / straight, unit: 'ratio' },
      ...memory.flatMap(({ n, idleMb, leastMb, mostMb }) => [
        { name: `${label(n)} contacts: process after start (VmHWM, median)`, value: idleMb, unit: 'MB' },
        { name: `${label(n)} contacts: added by the fan-out, least of ${ROUNDS}`, value: leastMb, unit: 'MB' },
        { name: `${label(n)} contacts: added by the fan-out, most of ${ROUNDS}`, value: mostMb, unit: 'MB' },
      ]),
      { name: `added by the fan-out (least), ${label(options.n)} / ${label(sizes[0]!)}`, value: large.leastMb / memory[0]!.leastMb, unit: 'ratio' },
      { name: `added by the fan-out (most), ${label(sizes[2]!)} / ${label(options.n)}`, value: memory[2]!.mostMb / large.mostMb, unit: 'ratio' },
    ];
  } finally {
    sink.close();
  }
}
