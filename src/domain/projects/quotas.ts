import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { addSends, lockSends, sentIn, takeSends } from '../../store/project-sends.ts';
import type { ProjectRow } from '../../store/projects.ts';

// A project's daily and monthly quotas (docs/projects.md#limits): emails accepted for sending per UTC
// day and month, as Resend counts its quotas. Each send takes its emails from a counter row per project
// and period in its own transaction, so that every API process agrees and a refused send counts nothing.

interface Quota {
  kind: 'daily' | 'monthly';
  /** The counter's period: `2026-11-29`, or `2026-11`. */
  period: string;
  limit: number;
  /** When it starts over (epoch ms): the next UTC midnight, or the first of next month. */
  resetsAt: number;
}

/** Whether sends of `project` are counted: it has a quota. */
export const hasQuota = (project: ProjectRow | undefined): project is ProjectRow =>
  project !== undefined && (project.daily_quota !== null || project.monthly_quota !== null);

function quotasOf(project: ProjectRow, now: number): Quota[] {
  const date = new Date(now);
  const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
  const iso = date.toISOString();
  const quotas: Quota[] = [];
  if (project.daily_quota !== null) quotas.push({ kind: 'daily', period: iso.slice(0, 10), limit: project.daily_quota, resetsAt: Date.UTC(year, month, day + 1) });
  if (project.monthly_quota !== null) quotas.push({ kind: 'monthly', period: iso.slice(0, 7), limit: project.monthly_quota, resetsAt: Date.UTC(year, month + 1, 1) });
  return quotas;
}

/** Resend's quota headers: what was used of each quota the project has (less what this transaction took of `taken`). */
async function quotaHeaders(db: Db | Tx, project: ProjectRow, quotas: Quota[], taken: Quota[], count: number): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const quota of quotas) {
    const sent = (await sentIn(db, project.id, quota.period)) - (taken.includes(quota) ? count : 0);
    headers[`x-resend-${quota.kind}-quota`] = String(sent);
  }
  return headers;
}

/** 429 `daily_quota_exceeded` (or monthly), with the quota headers and `retry-after`: seconds until it starts over. */
async function quotaExceeded(db: Db | Tx, project: ProjectRow, quotas: Quota[], over: Quota, count: number, now: number, taken: Quota[] = []): Promise<AppError> {
  const headers = await quotaHeaders(db, project, quotas, taken, count);
  const used = Number(headers[`x-resend-${over.kind}-quota`]);
  const period = over.kind === 'daily' ? 'UTC day' : 'UTC month';
  const these = count === 1 ? 'this email' : `these ${count} emails`;
  return new AppError(
    `${over.kind}_quota_exceeded`,
    `You have reached your ${over.kind} email quota: this project may send ${over.limit} emails a ${period}, it has sent ${used}, and ${these} would pass it. It starts over at ${new Date(over.resetsAt).toISOString()}.`,
    { ...headers, 'retry-after': String(Math.max(1, Math.ceil((over.resetsAt - now) / 1000))) },
  );
}

/**
 * In the send's transaction: counts `count` emails against each quota of the project, or refuses them
 * all (the transaction rolls back what it took) with `daily_quota_exceeded` or `monthly_quota_exceeded`.
 * Resolves with Resend's quota headers: what is used of each quota, these emails included.
 */
export async function takeQuota(ctx: Context, tx: Tx, project: ProjectRow, count: number): Promise<Record<string, string>> {
  const now = ctx.clock.now();
  const quotas = quotasOf(project, now);
  const taken: Quota[] = [];
  const headers: Record<string, string> = {};
  for (const quota of quotas) {
    const sent = await takeSends(tx, project.id, quota.period, count, quota.limit);
    if (sent === undefined) throw await quotaExceeded(tx, project, quotas, quota, count, now, taken);
    taken.push(quota);
    headers[`x-resend-${quota.kind}-quota`] = String(sent);
  }
  return headers;
}

/** The project's quotas with no email left now. */
async function spentQuotas(db: Db, project: ProjectRow, quotas: Quota[]): Promise<Quota[]> {
  const spent: Quota[] = [];
  for (const quota of quotas) if ((await sentIn(db, project.id, quota.period)) >= quota.limit) spent.push(quota);
  return spent;
}

/** When a project with a quota spent may send again (the last of its spent quotas to start over); undefined while it may send. */
export async function quotaSpentUntil(ctx: Context, project: ProjectRow): Promise<number | undefined> {
  const spent = await spentQuotas(ctx.db, project, quotasOf(project, ctx.clock.now()));
  return spent.length === 0 ? undefined : Math.max(...spent.map((quota) => quota.resetsAt));
}

/** Refuses what would send more (a broadcast's send) while the project has no email left of a quota, as a send would be refused. */
export async function checkQuotaLeft(ctx: Context, projectId: string): Promise<void> {
  const project = await ctx.projects.find(projectId);
  if (!hasQuota(project)) return;
  const now = ctx.clock.now();
  const quotas = quotasOf(project, now);
  const [over] = await spentQuotas(ctx.db, project, quotas);
  if (over) throw await quotaExceeded(ctx.db, project, quotas, over, 1, now);
}

/**
 * In a fan-out's transaction: takes up to `wanted` emails from the project's quotas (the rows locked
 * until the commit); how many it may send, and when the quota that stopped it starts over.
 */
export async function takeUpTo(ctx: Context, tx: Tx, project: ProjectRow, wanted: number): Promise<{ granted: number; resetsAt?: number }> {
  let granted = wanted;
  let resetsAt: number | undefined;
  const quotas = quotasOf(project, ctx.clock.now());
  for (const quota of quotas) {
    const left = Math.max(0, quota.limit - (await lockSends(tx, project.id, quota.period)));
    if (left < granted) [granted, resetsAt] = [left, Math.max(resetsAt ?? 0, quota.resetsAt)];
  }
  for (const quota of quotas) if (granted > 0) await addSends(tx, project.id, quota.period, granted);
  return { granted, resetsAt };
}
