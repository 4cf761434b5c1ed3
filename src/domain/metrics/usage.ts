import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { idFloor } from '../../time/ids.ts';
import type { ApiKeyRow } from '../../store/api-keys.ts';
import * as store from '../../store/usage.ts';
import { effectiveRateLimit, RATE_WINDOW_MS } from '../api-keys/rate-limits.ts';

// GET /usage, in Resend's shape. Mailroom sets no quota: every limit is null but the request rate's,
// which is the calling key's. Days and months are UTC, as Resend's quotas are.

/** Slack on the id bound of a period: an id and its row's created_at are read a moment apart. */
const ID_SLACK_MS = 60_000;

/**
 * The period [from, until) as the store finds it. Ids carry the wall clock's time (ids.ts), created_at
 * the context's clock: when that clock runs ahead (a test's, moved forward), the id bound moves back as
 * far, so that it only ever widens the range, never cuts rows of the period out.
 */
export function period(ctx: Context, from: number, until: number): store.Period {
  const ahead = Math.max(0, ctx.clock.now() - Date.now());
  return { idFrom: idFloor(from - ahead - ID_SLACK_MS), from: toTimestamp(from), until: toTimestamp(until) };
}

async function emailsIn(ctx: Context, project: string, from: number, until: number) {
  const range = period(ctx, from, until);
  const [sent, received] = await Promise.all([store.countEmailsIn(ctx.db, project, range), store.countCreatedIn(ctx.db, project, 'received_emails', range)]);
  return { used: sent + received, limit: null, sent, received, resets_at: new Date(until).toISOString() };
}

/**
 * The counts of the key's project, today and this month: `sent` the emails accepted (by the API, SMTP submission or a
 * broadcast's fan-out) and not canceled, `received` the emails received, `used` both; how many
 * contacts, segments, broadcasts and domains there are; the automation runs started this month; and
 * the request rate `key` may make.
 */
export async function getUsage(ctx: Context, key: ApiKeyRow) {
  const now = new Date(ctx.clock.now());
  const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  const today = Date.UTC(year, month, day);
  const thisMonth = Date.UTC(year, month, 1);
  const nextMonth = Date.UTC(year, month + 1, 1);
  const project = key.project_id;
  const [daily, monthly, rows, runs] = await Promise.all([
    emailsIn(ctx, project, today, Date.UTC(year, month, day + 1)),
    emailsIn(ctx, project, thisMonth, nextMonth),
    store.countRows(ctx.db, project),
    store.countCreatedIn(ctx.db, project, 'automation_runs', period(ctx, thisMonth, nextMonth)),
  ]);
  return {
    object: 'usage' as const,
    emails: { daily, monthly },
    contacts: { used: rows.contacts, limit: null },
    segments: { used: rows.segments, limit: null },
    broadcasts: { used: rows.broadcasts, limit: null },
    ai_credits: { used: 0, limit: null, next_increase_at: null },
    automation_runs: { used: runs, limit: null, resets_at: new Date(nextMonth).toISOString() },
    domains: { used: rows.domains, limit: null },
    // Resend writes its one-second window '1000ms'.
    rate_limit: { limit: await effectiveRateLimit(ctx, key), duration: `${RATE_WINDOW_MS}ms` },
  };
}
