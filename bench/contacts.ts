// Contacts at scale: a CSV import of n contacts into a segment, against csv-parse and better-sqlite3
// writing the same rows into the same tables directly; then the cost of a page of that segment at
// its end against one at its start (keyset), beside what OFFSET would cost at the same depth.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { uuidv7 } from 'uuidv7';
import { openDb } from '../src/store/db.ts';
import { migrate } from '../src/store/migrations/index.ts';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { median } from './stats.ts';

const CHUNK = 2000;
const PAGE = 100;
const SAMPLED_PAGES = 20;
const ROUNDS = 5;

export function buildCsv(n: number): string {
  const lines = ['email,first_name,last_name'];
  for (let i = 0; i < n; i++) lines.push(`contact${i}@example.com,First${i},Last${i}`);
  return lines.join('\n');
}

/** The floor: parse the CSV and insert its rows into the same schema, CHUNK rows a synchronous=FULL transaction. */
async function insertStraight(csv: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
  const file = join(dir, 'baseline.db');
  const db = openDb(file);
  await migrate(db);
  await db.destroy();
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  const segment = uuidv7();
  sqlite.prepare('insert into segments (id, name, created_at) values (?, ?, ?)').run(segment, 'bench', 'now');
  const contact = sqlite.prepare(
    'insert into contacts (id, email, first_name, last_name, unsubscribed, created_at) values (?, ?, ?, ?, 0, ?)',
  );
  const member = sqlite.prepare('insert into segment_contacts (segment_id, contact_id) values (?, ?)');
  const write = sqlite.transaction((rows: string[][]) => {
    for (const [email, first, last] of rows) {
      const id = uuidv7();
      contact.run(id, email!.toLowerCase(), first, last, 'now');
      member.run(segment, id);
    }
  });
  const started = performance.now();
  const rows: string[][] = parse(csv, { from_line: 2 });
  for (let i = 0; i < rows.length; i += CHUNK) write(rows.slice(i, i + CHUNK));
  const ms = performance.now() - started;
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

export async function api(url: string, path: string, init: RequestInit = {}): Promise<any> {
  const response = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${BENCH_KEY}`, ...init.headers } });
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** POST /contacts/imports, then polls until the worker has completed it; resolves with the elapsed ms. */
export async function importThroughApi(url: string, csv: string, segment: string): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }));
  form.append('segments', JSON.stringify([{ id: segment }]));
  const started = performance.now();
  const { id } = await api(url, '/contacts/imports', { method: 'POST', body: form });
  for (;;) {
    const state = await api(url, `/contacts/imports/${id}`);
    if (state.status === 'completed') break;
    if (state.status === 'failed') throw new Error('the import failed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

/** Every page cursor of a segment, first to last, walking it once. */
async function pageCursors(url: string, segment: string): Promise<(string | undefined)[]> {
  const cursors: (string | undefined)[] = [undefined];
  for (;;) {
    const page = await api(url, `/segments/${segment}/contacts?limit=${PAGE}${cursors.at(-1) ? `&after=${cursors.at(-1)}` : ''}`);
    if (!page.has_more) return cursors;
    cursors.push(page.data.at(-1).id);
  }
}

/** Median time of a page at the start and at the end, sampled in alternation so that machine noise hits both. */
async function timePages(sample: (cursor: string | undefined) => Promise<unknown>, cursors: (string | undefined)[]) {
  const first = cursors.slice(0, SAMPLED_PAGES);
  const last = cursors.slice(-SAMPLED_PAGES);
  const times = { first: [] as number[], last: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < SAMPLED_PAGES; i++) {
      for (const [group, cursor] of [['first', first[i]], ['last', last[i]]] as const) {
        const started = performance.now();
        await sample(cursor);
        times[group].push(performance.now() - started);
      }
    }
  }
  return { first: median(times.first), last: median(times.last) };
}

/** The same pages read with OFFSET, straight from the database file: what keyset avoids. */
function timeOffsetPages(file: string, segment: string, n: number) {
  const sqlite = new SQLite(file, { readonly: true });
  const query = sqlite.prepare(
    `select c.id, c.email, c.first_name, c.last_name, c.created_at, c.unsubscribed from segment_contacts sc
     join contacts c on c.id = sc.contact_id where sc.segment_id = ? order by sc.contact_id desc limit ? offset ?`,
  );
  const time = (offset: number) => {
    const runs: number[] = [];
    for (let i = 0; i < ROUNDS * 4; i++) {
      const started = performance.now();
      query.all(segment, PAGE, offset);
      runs.push(performance.now() - started);
    }
    return median(runs);
  };
  const result = { first: time(0), last: time(n - PAGE) };
  sqlite.close();
  return result;
}

export async function benchContacts(options: { n: number }): Promise<Figure[]> {
  const csv = buildCsv(options.n);
  await insertStraight(buildCsv(2000)); // warm-up
  const straight = await insertStraight(csv);

  const mailroom = await startMailroom({});
  try {
    const create = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"bench"}' };
    const segment = (await api(mailroom.url, '/segments', create)).id as string;
    const importMs = await importThroughApi(mailroom.url, csv, segment);
    const cursors = await pageCursors(mailroom.url, segment);
    const page = (cursor: string | undefined) =>
      api(mailroom.url, `/segments/${segment}/contacts?limit=${PAGE}${cursor ? `&after=${cursor}` : ''}`);
    const keyset = await timePages(page, cursors);
    const offset = timeOffsetPages(mailroom.databaseUrl, segment, options.n);
    const n = options.n.toLocaleString('en-US');
    return [
      { name: `CSV parse + insert straight into SQLite, ${n} (baseline)`, value: (options.n / straight) * 1000, unit: 'contacts/s' },
      { name: `Mailroom POST /contacts/imports to completed, ${n}`, value: (options.n / importMs) * 1000, unit: 'contacts/s' },
      { name: `Mailroom import time for ${n} contacts`, value: importMs, unit: 'ms' },
      { name: 'Mailroom import / baseline', value: straight / importMs, unit: 'ratio' },
      { name: `GET a segment's first pages of ${PAGE} (median)`, value: keyset.first * 1000, unit: 'µs' },
      { name: `GET its last pages, ${n} deep (median)`, value: keyset.last * 1000, unit: 'µs' },
      { name: 'last page / first page (keyset)', value: keyset.last / keyset.first, unit: 'ratio' },
      { name: 'OFFSET instead, in SQL: last page / first page', value: offset.last / offset.first, unit: 'ratio' },
    ];
  } finally {
    await mailroom.stop();
  }
}
