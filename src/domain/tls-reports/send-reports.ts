import { gzipSync } from 'node:zlib';
import type { Context } from '../../context.ts';
import { lookupTxt } from '../../dns.ts';
import { AppError } from '../../errors.ts';
import { enqueue, ensure } from '../../jobs/enqueue.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import { insertTables, type Rows } from '../../store/insert-rows.ts';
import type { Tx } from '../../store/db.ts';
import { findStsPolicy } from '../../store/mta-sts-policies.ts';
import { deleteTlsDaysBefore, findUnreported, insertTlsReport, sessionCounts } from '../../store/tls-reports.ts';
import { toTimestamp } from '../../time/clock.ts';
import { newId } from '../../time/ids.ts';
import { emailTables } from '../emails/emails.ts';
import { prepareEmail } from '../emails/email-input.ts';
import { newMessageId } from '../emails/new-email.ts';
import { reportAddresses } from './report-address.ts';
import { reportMessage } from './report-message.ts';
import { DEFAULT_PROJECT_ID } from '../../store/projects.ts';
import { senderOf } from '../sending-domains/sender-domain.ts';
import { dayRange, tlsReport } from './report.ts';

// The daily TLS reports (RFC 8460): one `send-tls-reports` job, which every worker in direct mode adds at
// start if it is missing, runs every hour and reports each past UTC day's sessions to each recipient
// domain that asks for them (`_smtp._tls` TXT, rua): by mail through Mailroom's own sending, from
// MAILROOM_TLSRPT_FROM (signed by its domain), and by a `post-tls-report` job per https: address. A
// report is made once: its row (day, domain) is written with its email and jobs in one checkpoint.

export const TLS_REPORTS_JOB_KEY = 'send-tls-reports';
const EVERY_MS = 3600_000;
/** A day is reported this long after its end: every worker's counts of it are written by then. */
const SETTLE_MS = 15 * 60_000;
/** A domain whose DNS fails this many days running gets no report for that day. */
const GIVE_UP_MS = 3 * 86_400_000;
/** Counts and reports older than this are removed. */
const KEEP_MS = 31 * 86_400_000;
const BATCH = 100;
export const REPORT_TYPE = 'application/tlsrpt+gzip';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Adds the job unless it exists (a worker's start in direct mode with MAILROOM_TLSRPT on). */
export async function scheduleTlsReports(ctx: Context): Promise<void> {
  if (ctx.config.deliveryMode !== 'direct' || !ctx.config.tlsRpt.enabled) return;
  await ctx.writer.transaction((tx) => ensure(ctx, tx, 'send-tls-reports', {}, { key: TLS_REPORTS_JOB_KEY }));
}

/** The `send-tls-reports` task, one run: each past day and domain not yet reported, then the next run. */
export async function sendTlsReports(ctx: Context, attempt: Attempt<'send-tls-reports'>): Promise<TaskResult> {
  if (!ctx.config.tlsRpt.enabled) return done();
  const now = ctx.clock.now();
  const skipped = new Set<string>();
  for (;;) {
    const due = (await findUnreported(ctx.db, utcDay(now - SETTLE_MS), BATCH + skipped.size)).filter((d) => !skipped.has(`${d.day} ${d.domain}`));
    for (const { day, domain } of due) {
      const write = await reportOf(ctx, day, domain, now);
      if (!write) skipped.add(`${day} ${domain}`);
      // Taken over (its lock timed out): the other run goes on alone.
      else if (!(await attempt.checkpoint(write))) return done();
    }
    if (due.length === 0) break;
  }
  return done(async (tx) => {
    await deleteTlsDaysBefore(tx, utcDay(now - KEEP_MS));
    await enqueue(ctx, tx, 'send-tls-reports', {}, { key: TLS_REPORTS_JOB_KEY, runAt: now + EVERY_MS });
  });
}

/** What makes the report of `day` for `domain`; undefined when its DNS fails (the next run tries again). */
async function reportOf(ctx: Context, day: string, domain: string, now: number): Promise<((tx: Tx) => Promise<void>) | undefined> {
  let records: string[];
  try {
    records = await lookupTxt(ctx.dns, `_smtp._tls.${domain}`);
  } catch {
    if (now - dayRange(day)[1] < GIVE_UP_MS) return undefined;
    records = [];
  }
  const { mailto, https } = reportAddresses(records);
  const { organization, from } = ctx.config.tlsRpt;
  const reportId = `${day}_${domain}_${newId()}`;
  const rua = [...mailto.map((address) => `mailto:${address}`), ...https].join(',');
  const row = { day, domain, report_id: reportId, rua: rua || 'none published', created_at: toTimestamp(now) };
  if (!rua) return async (tx) => void (await insertTlsReport(tx, row));

  const kept = await findStsPolicy(ctx.db, domain);
  const counts = await sessionCounts(ctx.db, day, domain);
  const report = tlsReport({ organization, contact: from ?? `postmaster@${ctx.config.mailHostname}`, reportId, day, domain, policy: kept?.policy, counts, sendingIp: ctx.config.sendingIps?.[0] });
  const gzipped = gzipSync(JSON.stringify(report));
  let emailRows: Rows | undefined;
  if (mailto.length > 0 && !from) ctx.log.info({ domain, day }, 'TLS report not mailed: set MAILROOM_TLSRPT_FROM');
  if (mailto.length > 0 && from) emailRows = await reportEmail(ctx, { from, to: mailto, domain, reportId, day, gzipped });
  return async (tx) => {
    if (!(await insertTlsReport(tx, row))) return;
    if (emailRows) await insertTables(tx, emailRows);
    for (const url of https) await enqueue(ctx, tx, 'post-tls-report', { url, report: gzipped.toString('base64'), domain, day });
  };
}

/** The report as an email (RFC 8460 5.3), through the same checks as POST /emails; undefined when they refuse it (logged). */
async function reportEmail(ctx: Context, r: { from: string; to: string[]; domain: string; reportId: string; day: string; gzipped: Buffer }): Promise<Rows | undefined> {
  const { organization } = ctx.config.tlsRpt;
  const [start, end] = dayRange(r.day).map((ms) => ms / 1000);
  const id = newId();
  const messageId = newMessageId(id, r.from.slice(r.from.lastIndexOf('@') + 1));
  const subject = `Report Domain: ${r.domain} Submitter: ${organization} Report-ID: <${r.reportId}>`;
  const text = `This is an aggregate TLS report from ${organization} for ${r.domain}, ${r.day} (UTC).\n`;
  const filename = `${organization}!${r.domain}!${start}!${end}.json.gz`;
  try {
    const source = await reportMessage({ from: r.from, to: r.to, subject, messageId, date: new Date(ctx.clock.now()), domain: r.domain, submitter: organization, text, filename, gzipped: r.gzipped });
    const attachments = [{ position: 0, filename, content_type: REPORT_TYPE, content_id: null, content: r.gzipped }];
    // The install's reports, not a project's: they are the default project's mail.
    const prepared = await prepareEmail(ctx, { from: r.from, to: r.to, subject, text }, senderOf(DEFAULT_PROJECT_ID), { id, source, envelope: r.to, messageId, attachments });
    return await emailTables(ctx, [prepared]);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    ctx.log.warn({ domain: r.domain, day: r.day, err: error }, `TLS report not mailed: ${error.message}`);
    return undefined;
  }
}
