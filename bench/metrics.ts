// GET /emails/metrics over n emails with their events spread over 30 days: 30 days, daily, every metric,
// through HTTP to an API process, beside a plain COUNT(*) of the events table in the same run. The
// data is written straight into a fresh database (SQLite, or BENCH_DATABASE_URL, a PostgreSQL schema
// of its own): emails, their events, and the rollup rows of those events made by the same rule
// (domain/metrics/rollup.ts) as the events' own transactions make them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { toTimestamp } from '../src/time/clock.ts';
import { readConfig } from '../src/config.ts';
import { closeContext, createContext, type Context } from '../src/context.ts';
import { rollupRows, type RolledEvent } from '../src/domain/metrics/rollup.ts';
import { newId } from '../src/time/ids.ts';
import { mergeMetricRows, type EmailMetricRow } from '../src/store/email-metrics.ts';
import { insertRows } from '../src/store/insert-rows.ts';
import type { EmailEventTable, EmailTable } from '../src/store/schema.ts';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { DEFAULT_PROJECT_ID } from '../src/store/projects.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';
import { median } from './stats.ts';

const DAYS = 30;
const DAY = 86_400_000;
const BATCH = 5_000;
const ROUNDS = 7;
const DOMAINS = ['acme.test', 'shop.test', 'news.test', 'billing.test', 'alerts.test'];
const BROADCASTS = Array.from({ length: 4 }, () => newId());

/** One email's events, as a mix of outcomes: mostly delivered, some opened and clicked (a few twice), bounces, delays, complaints. */
function eventsOf(emailId: string, recipient: string, createdAt: number, random: () => number): EmailEventTable[] {
  const rows: EmailEventTable[] = [];
  const add = (type: string, at: number, response: string | null = null, bot = 0) =>
    rows.push({ id: newId(), email_id: emailId, type, recipient, response, created_at: toTimestamp(Math.min(at, Date.now())), link: null, bot });
  const roll = random();
  if (roll < 0.01) add('failed', createdAt, 'refused');
  else if (roll < 0.04) {
    add('sent', createdAt + 1000);
    add('bounced', createdAt + 2000, roll < 0.035 ? '550 5.1.1 no such user' : '451 4.2.2 mailbox full');
  } else {
    if (roll < 0.06) add('delivery_delayed', createdAt + 1000, '451 4.7.1 try later');
    add('sent', createdAt + 1000);
    add('delivered', createdAt + 2000, '250 2.0.0 OK');
    if (random() < 0.35) {
      add('opened', createdAt + 600_000, null, random() < 0.1 ? 1 : 0);
      if (random() < 0.3) add('opened', createdAt + 3_600_000);
      if (random() < 0.3) add('clicked', createdAt + 3_700_000);
    }
    if (random() < 0.002) add('complained', createdAt + 7_200_000);
    if (random() < 0.005) add('unsubscribed', createdAt + 7_300_000);
  }
  return rows;
}

/** n emails over the last 30 days with their events and rollup rows; answers how many events. */
export async function seed(ctx: Context, n: number): Promise<number> {
  let seed = 42;
  // A small deterministic generator: the same data in every run.
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  const end = Date.now();
  // The rollup's rows by key, added up as they come (mergeMetricRows over each batch, then into these).
  const rollup = new Map<string, EmailMetricRow>();
  let events = 0;
  for (let i = 0; i < n; i += BATCH) {
    const emails: EmailTable[] = [];
    const eventRows: EmailEventTable[] = [];
    const increments: EmailMetricRow[] = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      const id = newId();
      const createdAt = end - DAYS * DAY + Math.floor((j / n) * DAYS * DAY);
      const domain = DOMAINS[j % DOMAINS.length]!;
      const broadcast = j % 5 === 0 ? BROADCASTS[j % BROADCASTS.length]! : null;
      const recipient = `user${j}@example.com`;
      emails.push({
        id, project_id: DEFAULT_PROJECT_ID, from: `News <news@${domain}>`, to: JSON.stringify([recipient]), cc: '[]', bcc: '[]', reply_to: '[]', subject: 'Hello', headers: null, tags: null,
        message_id: `<${id}@${domain}>`, scheduled_at: null, last_event: 'delivered', created_at: toTimestamp(createdAt), template_id: null, topic_id: null,
        broadcast_id: broadcast, personalization: null, body_removed_at: null, waiting_reason: null, waiting_domain: null,
      });
      const own = eventsOf(id, recipient, createdAt, random);
      const seen = new Set<string>();
      const rolled: RolledEvent[] = own.map((event) => {
        const first = !event.bot && (event.type === 'opened' || event.type === 'clicked') && !seen.has(event.type);
        if (first) seen.add(event.type);
        return { ...event, first };
      });
      for (const row of rollupRows(DEFAULT_PROJECT_ID, domain, broadcast, rolled)) increments.push(row);
      eventRows.push(...own);
    }
    events += eventRows.length;
    await ctx.writer.transaction(async (tx) => {
      await insertRows(tx, 'emails', emails);
      await insertRows(tx, 'email_events', eventRows);
    });
    for (const row of mergeMetricRows(increments)) {
      const key = `${row.slot} ${row.domain} ${row.broadcast_id} ${row.metric}`;
      const known = rollup.get(key);
      if (known) known.count += row.count;
      else rollup.set(key, row);
    }
  }
  await ctx.writer.transaction((tx) => insertRows(tx, 'email_metrics', [...rollup.values()]));
  return events;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export async function benchMetrics(options: { n: number; databaseUrl?: string }): Promise<Figure[]> {
  const dir = options.databaseUrl ? undefined : mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
  const postgres = options.databaseUrl ? await postgresSchema(options.databaseUrl, 'bench') : undefined;
  const databaseUrl = postgres?.url ?? join(dir!, 'mailroom.db');
  // PostgreSQL needs a secret every process shares.
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', MAILROOM_SECRET: randomBytes(32).toString('hex') };
  let ctx: Context | undefined;
  try {
    ctx = await createContext(readConfig(env));
    const seeding = performance.now();
    const events = await seed(ctx, options.n);
    // Autovacuum would have analyzed tables grown this much; without statistics PostgreSQL's planner
    // takes them for empty and picks a bitmap scan ten times slower than reading the table.
    if (postgres) await sql`analyze`.execute(ctx.db);
    const seedS = (performance.now() - seeding) / 1000;
    const mailroom = await startMailroom({ role: 'api', databaseUrl, env });
    try {
      const start = new Date(Date.now() - (DAYS - 1) * DAY).toISOString().slice(0, 10);
      const ask = async (query: string) => {
        const response = await fetch(`${mailroom.url}/emails/metrics?${query}`, { headers: { authorization: `Bearer ${BENCH_KEY}` } });
        if (!response.ok) throw new Error(`GET /emails/metrics?${query}: ${response.status} ${await response.text()}`);
        return (await response.json()) as { totals: Record<string, number> };
      };
      const daily = `start_date=${start}&granularity=daily&dimensions=period`;
      const byDomain = `${daily},domain`;
      const sent = (await ask(daily)).totals.sent!;
      if (sent < options.n * 0.9) throw new Error(`the metrics count ${sent} sent of ${options.n} emails`);
      const db = ctx.db;
      const count = () => sql`select count(*) as n from email_events`.execute(db);
      const runs = { count: [] as number[], daily: [] as number[], byDomain: [] as number[] };
      // In turns, so that machine noise falls on each alike.
      for (let round = 0; round < ROUNDS; round++) {
        runs.count.push(await timed(count));
        runs.daily.push(await timed(() => ask(daily)));
        runs.byDomain.push(await timed(() => ask(byDomain)));
      }
      const rollupRows = Number((await sql<{ n: number }>`select count(*) as n from email_metrics`.execute(db)).rows[0]!.n);
      const n = options.n.toLocaleString('en-US');
      return [
        { name: `emails written with their events and rollup (in ${seedS.toFixed(0)} s)`, value: options.n, unit: 'emails' },
        { name: 'events', value: events, unit: 'rows' },
        { name: 'rollup rows', value: rollupRows, unit: 'rows' },
        { name: `SELECT COUNT(*) FROM email_events, ${events.toLocaleString('en-US')} rows (baseline)`, value: median(runs.count), unit: 'ms' },
        { name: `GET /emails/metrics, ${n} emails, 30 days, daily, all metrics`, value: median(runs.daily), unit: 'ms' },
        { name: 'the same by domain too (period, domain)', value: median(runs.byDomain), unit: 'ms' },
        { name: 'GET /emails/metrics daily / COUNT(*)', value: median(runs.daily) / median(runs.count), unit: 'ratio' },
        { name: 'GET /emails/metrics by domain / COUNT(*)', value: median(runs.byDomain) / median(runs.count), unit: 'ratio' },
      ];
    } finally {
      await mailroom.stop();
    }
  } finally {
    if (ctx) await closeContext(ctx);
    if (dir) rmSync(dir, { recursive: true, force: true });
    await postgres?.drop();
  }
}
