// An older endpoint's list without `limit`: GET /contacts over n contacts, streamed slice by slice,
// beside the same list answered as it was before (one query, the whole array serialized at once) and a
// page of 100, each in a fresh API process on the same database. Measured in that process: the longest
// event-loop stall (what every other request waits behind) and the peak memory the request adds.
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toTimestamp } from '../src/time/clock.ts';
import { readConfig } from '../src/config.ts';
import { closeContext, createContext } from '../src/context.ts';
import { newId } from '../src/time/ids.ts';
import type { Figure } from './delivery.ts';
import type { ListServerStats } from './list-server.ts';
import { BENCH_KEY } from './mailroom.ts';
import { DEFAULT_PROJECT_ID } from '../src/store/projects.ts';
import { median } from './stats.ts';

const ROUNDS = 3;
const WARM_UP = 20;

/** n contacts written straight into a fresh database, as an import would leave them. */
async function seed(databaseUrl: string, n: number): Promise<void> {
  const ctx = await createContext(readConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }));
  const now = toTimestamp(Date.now());
  for (let i = 0; i < n; i += 10_000) {
    const contacts = Array.from({ length: Math.min(10_000, n - i) }, (_, j) => ({
      id: newId(),
      project_id: DEFAULT_PROJECT_ID,
      email: `contact${i + j}@example.com`,
      first_name: `First${i + j}`,
      last_name: `Last${i + j}`,
      unsubscribed: 0,
      created_at: now,
    }));
    await ctx.writer.insert({ contacts });
  }
  await closeContext(ctx);
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(message);
  });
}

/** GETs a path and reads the answer as it comes; resolves with its size, a hash of it, and the time to its end. */
function download(url: string, path: string): Promise<{ bytes: number; sha256: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${url}${path}`, { headers: { authorization: `Bearer ${BENCH_KEY}` } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`GET ${path} answered ${response.statusCode}`));
        const hash = createHash('sha256');
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          hash.update(chunk);
        });
        response.on('end', () => resolve({ bytes, sha256: hash.digest('hex'), ms: performance.now() - started }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * One GET in a fresh API process, then the same again: what each cost that process, and what the client
 * received. The first also pays for V8 growing its young generation under the allocation; the second shows
 * what the list itself keeps.
 */
async function measure(databaseUrl: string, path: string) {
  const child = fork(new URL('./list-server.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: databaseUrl, MAILROOM_API_KEY: BENCH_KEY, LOG_LEVEL: 'warn' },
  });
  try {
    const { address } = await new Promise<{ address: string }>((resolve) => child.once('message', (m) => resolve(m as { address: string })));
    // A few pages first, so that the first request's compiling and loading count for no variant.
    for (let i = 0; i < WARM_UP; i++) await download(address, '/contacts?limit=100');
    const once = async () => {
      await ask(child, 'reset');
      const received = await download(address, path);
      return { ...received, ...(await ask<ListServerStats>(child, 'stats')) };
    };
    const first = await once();
    return { ...first, againMb: (await once()).addedMb };
  } finally {
    child.disconnect();
  }
}

export async function benchLists(options: { n: number }): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
  try {
    const databaseUrl = join(dir, 'mailroom.db');
    await seed(databaseUrl, options.n);
    const paths = { page: '/contacts?limit=100', whole: '/bench/contacts-whole', streamed: '/contacts' };
    const runs = { page: [], whole: [], streamed: [] } as Record<keyof typeof paths, Awaited<ReturnType<typeof measure>>[]>;
    // In turns, so that machine noise falls on every variant alike.
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of Object.keys(paths) as (keyof typeof paths)[]) runs[variant].push(await measure(databaseUrl, paths[variant]));
    }
    const hashes = new Set([...runs.whole, ...runs.streamed].map((run) => run.sha256));
    if (hashes.size !== 1) throw new Error('the streamed list and the whole one differ');
    const of = (variant: keyof typeof paths, field: 'stallMs' | 'addedMb' | 'againMb' | 'ms') => median(runs[variant].map((run) => run[field]));
    const n = options.n.toLocaleString('en-US');
    return [
      { name: 'GET /contacts?limit=100: longest event-loop stall (baseline)', value: of('page', 'stallMs'), unit: 'ms' },
      { name: `GET /contacts, ${n}, whole array (before): longest stall`, value: of('whole', 'stallMs'), unit: 'ms' },
      { name: `GET /contacts, ${n}, streamed in slices: longest stall`, value: of('streamed', 'stallMs'), unit: 'ms' },
      { name: 'longest stall, whole / baseline', value: of('whole', 'stallMs') / of('page', 'stallMs'), unit: 'ratio' },
      { name: 'longest stall, streamed / baseline', value: of('streamed', 'stallMs') / of('page', 'stallMs'), unit: 'ratio' },
      { name: 'longest stall, streamed / whole', value: of('streamed', 'stallMs') / of('whole', 'stallMs'), unit: 'ratio' },
      { name: 'GET /contacts?limit=100: peak memory added (baseline)', value: of('page', 'addedMb'), unit: 'MB' },
      { name: 'whole array: peak memory added', value: of('whole', 'addedMb'), unit: 'MB' },
      { name: 'streamed: peak memory added', value: of('streamed', 'addedMb'), unit: 'MB' },
      { name: 'peak memory added, streamed / whole', value: of('streamed', 'addedMb') / of('whole', 'addedMb'), unit: 'ratio' },
      { name: 'whole array, the same request again: peak memory added', value: of('whole', 'againMb'), unit: 'MB' },
      { name: 'streamed, the same request again: peak memory added', value: of('streamed', 'againMb'), unit: 'MB' },
      { name: `whole array: time to the last byte (${(runs.whole[0]!.bytes / 1e6).toFixed(1)} MB)`, value: of('whole', 'ms'), unit: 'ms' },
      { name: 'streamed: time to the last byte', value: of('streamed', 'ms'), unit: 'ms' },
      { name: 'time to the last byte, streamed / whole', value: of('streamed', 'ms') / of('whole', 'ms'), unit: 'ratio' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
