// Retention on PostgreSQL, two ways, on a synthetic event log of `rows` events over 30 days (the shape of
// `events`: a UUIDv7 id, its type, time, payload and email): deleting the oldest day's rows 500 a
// transaction, as store/retention.ts deletes request logs and webhook attempts, then the VACUUM that
// makes their space reusable; against dropping that day's partition of the same table partitioned by
// day on its id (a UUIDv7 id starts with its time, so a day is a range of ids and the key stays unique).
import pg from 'pg';
import type { Figure } from './delivery.ts';
import { idFloor } from '../src/time/ids.ts';

const DAY_MS = 86_400_000;
const DAYS = 30;
const START = Date.UTC(2026, 9, 1);
const BATCH = 500;

/** `rows` events evenly over DAYS days from START, as one SELECT (ids made of the time, as uuidv7's). */
function events(rows: number): string {
  const step = (DAYS * DAY_MS) / rows;
  return `
    select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12) as id,
      'email.delivered' as type, at as created_at,
      '{"type":"email.delivered","created_at":"' || at || '","data":{"email_id":"' || r || '","from":"Acme <orders@example.com>","to":["customer' || i
        || '@example.com"],"subject":"Your order #' || i || ' has shipped","created_at":"' || at || '","tags":{"category":"shipping"}}}' as data,
      r as email_id
    from (
      select i, lpad(to_hex(ms), 12, '0') as h, md5(i::text) as r,
        to_char(to_timestamp(ms / 1000.0) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00' as at
      from (select i, (${START} + i::bigint * ${step})::bigint as ms from generate_series(0, ${rows - 1}) as i) as times
    ) as made`;
}

const columns = `id text collate "C" not null, type text not null, created_at text not null, data text not null, email_id text collate "C"`;

/** Runs `work`, resolving with its time in ms and the WAL the server wrote meanwhile, in bytes. */
async function timed(client: pg.Client, work: () => Promise<void>): Promise<{ ms: number; wal: number }> {
  const lsn = async () => (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
  const before = await lsn();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const wal = Number((await client.query<{ bytes: string }>(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '${before}') as bytes`)).rows[0]!.bytes);
  return { ms, wal };
}

const size = async (client: pg.Client, table: string) =>
  Number((await client.query<{ bytes: string }>(`select pg_total_relation_size('${table}') as bytes`)).rows[0]!.bytes);

/** A day's events deleted as retention deletes, against a day's partition dropped, on the database at `url`. */
export async function benchPartitions(url: string, rows: number): Promise<Figure[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`create table plain_events (${columns}, primary key (id))`);
    await client.query('create index plain_events_email on plain_events (email_id, id)');
    await client.query(`create table parted_events (${columns}, primary key (id)) partition by range (id)`);
    await client.query('create index parted_events_email on parted_events (email_id, id)');
    for (let day = 0; day < DAYS; day++) {
      const [from, to] = [idFloor(START + day * DAY_MS), idFloor(START + (day + 1) * DAY_MS)];
      await client.query(`create table parted_events_${day} partition of parted_events for values from ('${from}') to ('${to}')`);
    }
    await client.query('checkpoint');
    const loadPlain = await timed(client, async () => void (await client.query(`insert into plain_events ${events(rows)}`)));
    const loadParted = await timed(client, async () => void (await client.query(`insert into parted_events ${events(rows)}`)));
    await client.query('vacuum analyze plain_events, parted_events');
    const [plainBefore, partedBefore] = [await size(client, 'plain_events'), await partedSize(client)];
    await client.query('checkpoint');

    const firstDay = idFloor(START + DAY_MS);
    const deleted = await timed(client, async () => {
      for (;;) {
        const result = await client.query(
          `delete from plain_events where id in (select id from plain_events where id < '${firstDay}' order by id limit ${BATCH})`,
        );
        if ((result.rowCount ?? 0) < BATCH) break;
      }
    });
    const vacuumed = await timed(client, async () => void (await client.query('vacuum plain_events')));
    const dropped = await timed(client, async () => void (await client.query('drop table parted_events_0')));
    const [plainAfter, partedAfter] = [await size(client, 'plain_events'), await partedSize(client)];
    const perDay = rows / DAYS;
    return [
      { name: `retention: ${rows.toLocaleString('en-US')} events over ${DAYS} days, one day's removed`, value: perDay, unit: 'rows' },
      { name: 'load, one INSERT: plain table', value: loadPlain.ms, unit: 'ms' },
      { name: 'load, one INSERT: partitioned by day', value: loadParted.ms, unit: 'ms' },
      { name: 'delete, 500 a transaction (store/retention.ts)', value: deleted.ms, unit: 'ms' },
      { name: '  WAL written', value: deleted.wal, unit: 'bytes' },
      { name: '  then VACUUM (space reusable, files as large)', value: vacuumed.ms, unit: 'ms' },
      { name: '  WAL written', value: vacuumed.wal, unit: 'bytes' },
      { name: '  disk given back to the system', value: plainBefore - plainAfter, unit: 'bytes' },
      { name: 'DROP TABLE of the day (baseline)', value: dropped.ms, unit: 'ms' },
      { name: '  WAL written', value: dropped.wal, unit: 'bytes' },
      { name: '  disk given back to the system', value: partedBefore - partedAfter, unit: 'bytes' },
      { name: 'delete and VACUUM / DROP, time', value: (deleted.ms + vacuumed.ms) / dropped.ms, unit: 'ratio' },
      { name: 'delete and VACUUM / DROP, WAL', value: (deleted.wal + vacuumed.wal) / Math.max(1, dropped.wal), unit: 'ratio' },
    ];
  } finally {
    await client.end();
  }
}

/** A partitioned table's size: its partitions', with their indexes and TOAST. */
async function partedSize(client: pg.Client): Promise<number> {
  const result = await client.query<{ bytes: string }>(
    "select coalesce(sum(pg_total_relation_size(relid)), 0) as bytes from pg_partition_tree('parted_events')",
  );
  return Number(result.rows[0]!.bytes);
}
