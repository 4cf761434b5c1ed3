// Disk per delivered email. Typical 1 KB emails posted one a request to a `--role api` process and relayed
// by a `--role worker` process into a sink; then what each table and its indexes grew by, per email, on
// SQLite and on a PostgreSQL cluster of the bench's own (so nothing else writes its WAL or spends its
// CPU), beside the baseline measured in the same run: the message as sent, its RFC 5322 bytes. On
// PostgreSQL also the WAL written per email, and on both the CPU each email cost the API process, the
// worker process and the server. Then retention's two ways on PostgreSQL (partitions.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { typical } from './api.ts';
import { cpuMs } from './cpu.ts';
import type { Figure } from './delivery.ts';
import { postEmails } from './delivery.ts';
import { startMailroom } from './mailroom.ts';
import { benchPartitions } from './partitions.ts';
import { query } from './scale.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { clusterUnavailable, startPostgresCluster } from '../test/support/postgres-cluster.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

const WARM_UP = 500;
const SECRET = 'bench-disk-secret-'.repeat(3);

/** A typical email to a recipient of its own (PostgreSQL's indexes would fold equal keys into one). */
const payload = (i: number) => ({ ...typical, to: [`customer${i}@example.com`], subject: `Your order #${i} has shipped` });

/** Bytes by table: its rows (with TOAST on PostgreSQL) and its indexes. */
type Sizes = Map<string, { rows: number; indexes: number }>;

/** What one database is asked, and how its size is read. */
interface Target {
  name: string;
  databaseUrl: string;
  /** The first number of the first row `sql` answers. */
  scalar(sql: string): Promise<number>;
  sizes(): Promise<Sizes>;
  /** The database's whole size in bytes (SQLite: its pages, as the file holds them after a checkpoint). */
  total(): Promise<number>;
  /** The server's CPU so far (PostgreSQL), and the WAL position in bytes. */
  serverCpuMs?(): number;
  wal?(): Promise<number>;
  /** Brings the files to what they hold at rest (a checkpoint; PostgreSQL's VACUUM, as autovacuum would). */
  settle(): Promise<void>;
}

const until = async (check: () => Promise<boolean>) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
};

/** Once `total` messages are in the sink and all that follows is written: job ends, the rollup folded, request logs. */
async function settled(target: Target, sink: Sink, total: number): Promise<void> {
  await waitForCount(sink, total);
  await until(async () => (await target.scalar("select count(*) from jobs where task = 'send-email'")) === 0);
  await until(async () => (await target.scalar('select count(*) from email_metric_deltas')) === 0);
  await until(async () => (await target.scalar('select count(*) from api_logs')) >= total);
}

interface Measured {
  emails: number;
  message: number;
  grown: Sizes;
  total: number;
  wal?: number;
  cpu: { api: number; worker: number; server?: number };
}

/** Posts WARM_UP then n emails, each delivered; the bytes every table grew by, and the measured part's CPU and WAL. */
async function measure(target: Target, sink: Sink, n: number): Promise<Measured> {
  sink.reset();
  const mailroom = await startMailroom({ databaseUrl: target.databaseUrl, role: 'api', workers: 1, env: { SMTP_URL: sink.url, MAILROOM_SECRET: SECRET } });
  let stopped = false;
  try {
    const [before, totalBefore] = [await target.sizes(), await target.total()];
    await postEmails(mailroom.url, WARM_UP, 16, payload);
    await settled(target, sink, WARM_UP);
    const pids = mailroom.pids as [number, number];
    const cpuBefore = [...pids.map(cpuMs), target.serverCpuMs?.() ?? 0];
    const walBefore = await target.wal?.();
    await postEmails(mailroom.url, n, 16, (i) => payload(WARM_UP + i));
    await settled(target, sink, WARM_UP + n);
    const cpu = [...pids.map(cpuMs), target.serverCpuMs?.() ?? 0].map((ms, i) => (ms - cpuBefore[i]!) / n) as [number, number, number];
    const wal = walBefore === undefined ? undefined : ((await target.wal!()) - walBefore) / n;
    await mailroom.stop();
    stopped = true;
    await target.settle();
    const emails = WARM_UP + n;
    const grown: Sizes = new Map();
    for (const [table, size] of await target.sizes()) {
      const was = before.get(table) ?? { rows: 0, indexes: 0 };
      grown.set(table, { rows: (size.rows - was.rows) / emails, indexes: (size.indexes - was.indexes) / emails });
    }
    return {
      emails,
      message: await target.scalar('select avg(length(raw)) from sent_messages'),
      grown,
      total: ((await target.total()) - totalBefore) / emails,
      wal,
      cpu: { api: cpu[0], worker: cpu[1], server: target.serverCpuMs ? cpu[2] : undefined },
    };
  } finally {
    if (!stopped) await mailroom.stop();
  }
}

function sqliteTarget(file: string): Target {
  const open = <T>(read: (db: SQLite.Database) => T, readonly = true): T => {
    const db = new SQLite(file, { readonly });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  return {
    name: 'SQLite',
    databaseUrl: file,
    scalar: async (sql) => open((db) => Number(Object.values(db.prepare(sql).get() as object)[0] ?? 0)),
    // dbstat: the pages of each b-tree, named by its table or index.
    sizes: async () =>
      open((db) => {
        const rows = db
          .prepare('select m.tbl_name as tbl, m.type as type, sum(s.pgsize) as bytes from dbstat s join sqlite_schema m on m.name = s.name group by 1, 2')
          .all() as { tbl: string; type: string; bytes: number }[];
        const sizes: Sizes = new Map();
        for (const row of rows) {
          const size = sizes.get(row.tbl) ?? { rows: 0, indexes: 0 };
          size[row.type === 'index' ? 'indexes' : 'rows'] += row.bytes;
          sizes.set(row.tbl, size);
        }
        return sizes;
      }),
    total: async () => open((db) => Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }))),
    settle: async () => void open((db) => db.pragma('wal_checkpoint(TRUNCATE)'), false),
  };
}

function postgresTarget(url: string, serverCpuMs: () => number): Target {
  const scalar = async (sql: string) => Number(Object.values((await query(url, sql)).rows[0] as object)[0] ?? 0);
  return {
    name: 'PostgreSQL',
    databaseUrl: url,
    scalar,
    sizes: async () => {
      const result = await query(
        url,
        `select c.relname as tbl, pg_table_size(c.oid) as rows, pg_indexes_size(c.oid) as indexes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'`,
      );
      return new Map(result.rows.map((row: { tbl: string; rows: string; indexes: string }) => [row.tbl, { rows: Number(row.rows), indexes: Number(row.indexes) }]));
    },
    total: () =>
      scalar(`select sum(pg_total_relation_size(c.oid)) from pg_class c join pg_namespace n on n.oid = c.relnamespace
              where n.nspname = current_schema() and c.relkind = 'r'`),
    serverCpuMs,
    // From a checkpoint, so that each page's first change after it (a full-page image) is counted as a long run would.
    wal: async () => {
      await query(url, 'checkpoint');
      return scalar("select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')");
    },
    settle: async () => void (await query(url, 'vacuum')),
  };
}

/** The figures of one database: bytes per email in all and by table (those of 1% or more), and CPU. */
function report(target: Target, measured: Measured): Figure[] {
  const { message, grown, total } = measured;
  const tables = [...grown].filter(([, size]) => size.rows + size.indexes >= total / 100).sort((a, b) => b[1].rows + b[1].indexes - (a[1].rows + a[1].indexes));
  const figures: Figure[] = [
    { name: `${target.name}: on disk per delivered email (${measured.emails.toLocaleString('en-US')})`, value: total, unit: 'bytes' },
    { name: '  / the message as sent', value: total / message, unit: 'ratio' },
  ];
  for (const [table, size] of tables) {
    figures.push({ name: `  ${table}: rows`, value: size.rows, unit: 'bytes' });
    if (size.indexes > 0) figures.push({ name: `  ${table}: indexes`, value: size.indexes, unit: 'bytes' });
  }
  if (measured.wal !== undefined) {
    figures.push({ name: `${target.name}: WAL written per email`, value: measured.wal, unit: 'bytes' }, { name: '  / the message as sent', value: measured.wal / message, unit: 'ratio' });
  }
  figures.push(
    { name: `${target.name}: CPU per email, API process`, value: measured.cpu.api, unit: 'ms' },
    { name: `${target.name}: CPU per email, worker process`, value: measured.cpu.worker, unit: 'ms' },
  );
  if (measured.cpu.server !== undefined) figures.push({ name: `${target.name}: CPU per email, the server`, value: measured.cpu.server, unit: 'ms' });
  return figures;
}

export async function benchDisk(options: { n: number; events: number }): Promise<Figure[]> {
  const unavailable = clusterUnavailable();
  if (unavailable) throw new Error(`bench disk runs a PostgreSQL cluster of its own: ${unavailable}`);
  const sink = await startSink();
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-disk-'));
  const cluster = await startPostgresCluster();
  try {
    const sqlite = sqliteTarget(join(dir, 'mailroom.db'));
    const onSqlite = await measure(sqlite, sink, options.n);
    const schema = await postgresSchema(cluster.url, 'bench');
    const postgres = postgresTarget(schema.url, () => cluster.cpuMs());
    const onPostgres = await measure(postgres, sink, options.n);
    const retention = await postgresSchema(cluster.url, 'retention');
    return [
      { name: 'the message as sent, RFC 5322 (baseline)', value: onSqlite.message, unit: 'bytes' },
      ...report(sqlite, onSqlite),
      ...report(postgres, onPostgres),
      ...(await benchPartitions(retention.url, options.events)),
    ];
  } finally {
    sink.close();
    await cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
