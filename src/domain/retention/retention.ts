// Retention: what is removed once MAILROOM_RETENTION_DAYS have passed, in batches, by the one
// `retention` job (runRetention), and how what was removed is spoken of. Emails and received
// emails keep their rows (metadata, events, webhook messages: small, and what the API lists); their
// bodies, attachments and messages go. Webhook attempts go whole: a log of each try, with the start
// of the endpoint's answer; so do the API's request logs and DMARC reports (with their rows). Expired
// idempotency keys go whatever the setting: they live 24 hours; so do the rate windows of API keys and
// destinations unused for a day.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { idFloor } from '../../time/ids.ts';
import type { Tx } from '../../store/db.ts';
import { deleteApiLogs } from '../../store/api-logs.ts';
import { purgeIdempotencyKeys } from '../../store/idempotency-keys.ts';
import { deleteStaleWindows } from '../../store/rate-limit-windows.ts';
import * as store from '../../store/retention.ts';
import { deleteOldSlowdowns } from '../../store/throttle-slowdowns.ts';
import type { EmailState } from '../events/email-events.ts';
import { enqueue, ensure, jobKey } from '../../jobs/enqueue.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';

/** Rows removed per transaction, so a writer never waits long behind a batch. */
export const RETENTION_BATCH = 500;

/** DMARC reports removed per transaction: each takes its rows, up to 20,000 of them. */
const DMARC_BATCH = 10;

/** Pages handed back to the file system per transaction (8 MB of 4 KB pages). */
const RECLAIM_PAGES = 2048;

/** How often the job runs. */
export const RETENTION_EVERY_MS = 3600_000;

/** The one retention job's key: unique while it exists, so every worker may add it at start. */
export const RETENTION_JOB_KEY = 'retention';

const DAY_MS = 86_400_000;

/**
 * The last events after which an email is not sent again: its bodies are no longer needed. `sent` and
 * `delivery_delayed` wait for more; `queued` and `scheduled` are not sent yet.
 */
export const SETTLED_STATES = ['canceled', 'failed', 'suppressed', 'bounced', 'delivered', 'opened', 'clicked', 'complained'] as const satisfies readonly EmailState[];

/** Adds the retention job unless it exists (a worker's start): due now, then it schedules itself. */
export async function scheduleRetention(ctx: Context): Promise<void> {
  await ctx.writer.transaction((tx) => ensure(ctx, tx, 'retention', {}, { key: RETENTION_JOB_KEY }));
}

/** One batch of a step, in the caller's transaction: how many rows it removed, and whether more are left. */
export type RetentionStep = (ctx: Context, tx: Tx, now: number) => Promise<{ removed: number; more: boolean }>;

const batch = (removed: number, limit = RETENTION_BATCH) => ({ removed, more: removed === limit });

/** Bodies older than this are removed; undefined when MAILROOM_RETENTION_DAYS is 0 (kept forever). */
const cutoff = (ctx: Context, now: number) => (ctx.config.retentionDays > 0 ? toTimestamp(now - ctx.config.retentionDays * DAY_MS) : undefined);

/** The steps of one run, in order; the last frees the file's pages the others freed (SQLite). */
export const RETENTION_STEPS: Record<string, RetentionStep> = {
  async emails(ctx, tx, now) {
    const before = cutoff(ctx, now);
    if (!before) return batch(0);
    const ids = await store.findExpiredEmails(tx, { before, settled: SETTLED_STATES, jobKeyPrefix: jobKey('send-email', ''), limit: RETENTION_BATCH });
    await store.removeEmailBodies(tx, ids, toTimestamp(now));
    return batch(ids.length);
  },
  async received_emails(ctx, tx, now) {
    const before = cutoff(ctx, now);
    if (!before) return batch(0);
    const ids = await store.findExpiredReceivedEmails(tx, before, RETENTION_BATCH);
    await store.removeReceivedBodies(tx, ids, toTimestamp(now));
    return batch(ids.length);
  },
  async webhook_attempts(ctx, tx, now) {
    const before = cutoff(ctx, now);
    return batch(before ? await store.deleteWebhookAttempts(tx, before, RETENTION_BATCH) : 0);
  },
  async dmarc_reports(ctx, tx, now) {
    const before = cutoff(ctx, now);
    return batch(before ? await store.deleteDmarcReports(tx, before, DMARC_BATCH) : 0, DMARC_BATCH);
  },
  async api_logs(ctx, tx, now) {
    // A log's id is a UUIDv7 of its time by the clock (request-logs.ts): the old ones are a range of the primary key.
    const days = ctx.config.retentionDays;
    return batch(days > 0 ? await deleteApiLogs(tx, idFloor(now - days * DAY_MS), RETENTION_BATCH) : 0);
  },
  idempotency_keys: async (_ctx, tx, now) => batch(await purgeIdempotencyKeys(tx, now, RETENTION_BATCH)),
  async rate_windows(_ctx, tx, now) {
    const removed = [
      await deleteStaleWindows(tx, 'rate_limit_windows', now - DAY_MS, RETENTION_BATCH),
      await deleteStaleWindows(tx, 'throttle_windows', now - DAY_MS, RETENTION_BATCH),
      await deleteOldSlowdowns(tx, now - DAY_MS, RETENTION_BATCH),
    ];
    return { removed: removed.reduce((a, b) => a + b), more: removed.some((n) => n === RETENTION_BATCH) };
  },
  async pages(_ctx, tx) {
    const free = await store.reclaimablePages(tx);
    if (free > 0) await store.reclaimPages(tx, Math.min(free, RECLAIM_PAGES));
    return { removed: Math.min(free, RECLAIM_PAGES), more: free > RECLAIM_PAGES };
  },
};

/** The 404 of something retention removed, saying why (the API, downloads). */
export function removedByRetention(ctx: Context, what: string): AppError {
  return new AppError('not_found', `${what} ${removedAfter(ctx.config.retentionDays)}.`);
}

/** "removed after 30 days (MAILROOM_RETENTION_DAYS)", as the API and the dashboard say it. */
export function removedAfter(days: number): string {
  if (days === 0) return 'removed by retention (MAILROOM_RETENTION_DAYS)';
  return `removed after ${days} ${days === 1 ? 'day' : 'days'} (MAILROOM_RETENTION_DAYS)`;
}

/**
 * The `retention` task, one run: each step batch by batch, a checkpoint each (through the writer, so
 * other writers take turns between them), while this worker still holds the job. The run ends by
 * adding the next one, with the job's end: there is always exactly one.
 */
export async function runRetention(ctx: Context, attempt: Attempt<'retention'>): Promise<TaskResult> {
  const now = ctx.clock.now();
  const removed: Record<string, number> = {};
  for (const [name, step] of Object.entries(RETENTION_STEPS)) {
    for (let more = true; more; ) {
      let result = { removed: 0, more: false };
      // The writer may run this again if its group commit fails: it only writes, and answers.
      const held = await attempt.checkpoint(async (tx) => {
        result = await step(ctx, tx, now);
      });
      // Taken over (its lock timed out) or deleted: the other run goes on alone.
      if (!held) return done();
      removed[name] = (removed[name] ?? 0) + result.removed;
      more = result.more;
    }
  }
  ctx.log.info({ removed, retention_days: ctx.config.retentionDays }, 'retention run done');
  return done((tx) => enqueue(ctx, tx, 'retention', {}, { key: RETENTION_JOB_KEY, runAt: ctx.clock.now() + RETENTION_EVERY_MS }));
}
