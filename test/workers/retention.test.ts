import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { downloadLink } from '../../src/domain/links/download-links.ts';
import { RETENTION_BATCH, RETENTION_JOB_KEY, RETENTION_STEPS, scheduleRetention } from '../../src/domain/retention/retention.ts';
import { isPostgres } from '../../src/store/db.ts';
import { launchBrowser, signedIn, withBrowser } from '../support/browser.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { configEnv, dialects, eventually, followLink, freePort, requestJson, rowCount, startApp, type TestApp } from '../support/harness.ts';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { aggregateXml, mailReports } from '../support/dmarc-reports.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// Retention over the real app: the clock moved past MAILROOM_RETENTION_DAYS, the retention job (added as
// a worker's start adds it) removes bodies in batches and keeps the rest, and the API and dashboard say so.

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const REMOVED = /removed after 30 days \(MAILROOM_RETENTION_DAYS\)/;

const retentionJob = (t: TestApp) => t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', RETENTION_JOB_KEY).executeTakeFirst();

/** Waits until the retention job is waiting for its next run, after `previous` (a job id) if given. */
async function nextRun(t: TestApp, previous?: string) {
  return eventually(async () => {
    const job = await retentionJob(t);
    return job && job.id !== previous && job.locked_by === null && job.run_at > t.clock.now() && job;
  });
}

/** Moves the clock by `ms` (at least the hour between runs) and waits for the run that became due. */
async function runRetention(t: TestApp, ms: number) {
  const { id } = await nextRun(t);
  t.advance(ms);
  return nextRun(t, id);
}

const count = async (t: TestApp, table: 'email_contents' | 'email_attachments' | 'email_sources' | 'sent_messages', emailId: string) =>
  Number((await t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('email_id', '=', emailId).executeTakeFirstOrThrow()).n);

const attachment = { filename: 'notes.txt', content: Buffer.from('the notes').toString('base64') };

for (const dialect of dialects) {
  describe(`retention (${dialect})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let dns: TestDnsServer;
    let hooks: WebhookReceiver;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let submission: Awaited<ReturnType<typeof startSubmission>>;

    before(async () => {
      smtp = await startSmtpServer();
      // One recipient is always deferred: its email's job waits, whatever its last event says.
      smtp.onRecipient = (address) => (address === 'later@example.org' ? { code: 450, message: '4.2.0 try later' } : undefined);
      dns = await startDnsServer();
      hooks = await startWebhookReceiver();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', DNS_SERVERS: dns.address, ...INBOUND_ENV } });
      inbound = await startInbound(t);
      submission = await startSubmission(t);
      const inbox = await receivingDomain(t, 'inbox.test');
      await requestJson(t, 'PATCH', `/domains/${inbox.id}`, { dmarc_reports: { address: 'dmarc@inbox.test' } });
      await t.resend.webhooks.create({ endpoint: hooks.url, events: ['email.delivered'] });
      await scheduleRetention(t.ctx);
      await nextRun(t);
    });
    after(async () => {
      await submission?.close();
      await inbound?.close();
      await t?.close();
      await Promise.all([smtp?.close(), dns?.close(), hooks?.close()]);
    });

    it('removes the bodies, attachments and messages of old settled emails, received emails, old webhook attempts and DMARC reports; keeps their metadata, and what is recent or pending', async () => {
      // 31 days before the run: a delivered email, a submitted one, a received one, webhook attempts and a DMARC report.
      const old = (await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Old', html: '<p>old</p>', text: 'old', attachments: [attachment] })).data!.id;
      const client = submissionClient(submission.port, t.token, { requireTLS: true });
      const submitted = idOf((await client.sendMail({ from: 'a@example.com', to: 'c@example.org', subject: 'Submitted', text: 'submitted' })).response)!;
      client.close();
      const deferred = (await t.resend.emails.send({ from: 'a@example.com', to: ['d@example.org', 'later@example.org'], subject: 'Deferred', text: 'deferred' })).data!.id;
      const receivedReply = await sendTo(inbound.port, {
        envelope: { from: 'ada@sender.test', to: ['support@inbox.test'] },
        from: 'ada@sender.test',
        to: 'support@inbox.test',
        subject: 'Received',
        text: 'received',
        html: '<p>received</p>',
        attachments: [{ filename: 'r.txt', content: 'r' }],
      });
      const received = /OK ([0-9a-f-]{36})$/.exec(receivedReply.response)![1]!;
      const report = (reportId: string) => [{ filename: `${reportId}.xml`, content: aggregateXml({ reportId, domain: 'inbox.test', begin: t.clock.now() - DAY, end: t.clock.now(), rows: [{ ip: '192.0.2.1', count: 3 }] }) }];
      assert.equal((await mailReports(inbound.port, 'dmarc@inbox.test', report('old-report'))).code, 250);
      const scheduled = (await t.resend.emails.send({ from: 'a@example.com', to: 'e@example.org', subject: 'Scheduled', text: 'scheduled', scheduledAt: new Date(t.clock.now() + 25 * DAY).toISOString() })).data!.id;
      await eventually(async () => (await t.resend.emails.get(old)).data?.last_event === 'delivered' && (await t.resend.emails.get(submitted)).data?.last_event === 'delivered');
      await eventually(async () => (await t.resend.emails.get(deferred)).data?.last_event === 'delivered');
      await eventually(async () => (await rowCount(t, 'webhook_attempts')) >= 3);
      const oldAttempts = await rowCount(t, 'webhook_attempts');
      const messages = await rowCount(t, 'webhook_messages');
      assert.equal(await count(t, 'email_sources', submitted), 1);
      assert.equal(await count(t, 'sent_messages', old), 1);

      // 20 days on: nothing is old enough yet. The scheduled email (due in 5 days) moves 25 days on.
      await runRetention(t, 20 * DAY);
      assert.equal(await count(t, 'email_contents', old), 1);
      assert.equal((await requestJson(t, 'PATCH', `/emails/${scheduled}`, { scheduled_at: new Date(t.clock.now() + 25 * DAY).toISOString() })).status, 200);
      const recent = (await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Recent', html: '<p>recent</p>', attachments: [attachment] })).data!.id;
      assert.equal((await mailReports(inbound.port, 'dmarc@inbox.test', report('recent-report'))).code, 250);
      await eventually(async () => (await t.resend.emails.get(recent)).data?.last_event === 'delivered');
      await eventually(async () => (await rowCount(t, 'webhook_attempts')) > oldAttempts);
      const recentAttempts = (await rowCount(t, 'webhook_attempts')) - oldAttempts;

      // 11 days more: the first ones are 31 days old.
      await runRetention(t, 11 * DAY);

      const email = (await t.resend.emails.get(old)).data! as unknown as Record<string, unknown>;
      assert.equal(email.html, null);
      assert.equal(email.text, null);
      assert.equal(typeof email.body_removed_at, 'string');
      assert.equal(email.subject, 'Old');
      assert.equal(email.last_event, 'delivered');
      for (const table of ['email_contents', 'email_attachments', 'sent_messages'] as const) assert.equal(await count(t, table, old), 0, table);
      assert.deepEqual((await requestJson(t, 'GET', `/emails/${old}/attachments`)).body.data, []);
      const raw = await t.fetch(`/emails/${old}/raw`);
      assert.equal(raw.status, 404);
      assert.match(((await raw.json()) as { message: string }).message, REMOVED);
      // A download link made before the removal (still within its hour) says why it is gone.
      const link = downloadLink(t.ctx, { kind: 'email-attachment', id: `${old}.0` });
      const download = await followLink(t, link.download_url);
      assert.equal(download.status, 404);
      assert.match(((await download.json()) as { message: string }).message, REMOVED);
      assert.ok((await requestJson(t, 'GET', `/emails/${old}/events`)).body.data.some((e: { type: string }) => e.type === 'delivered'), 'its events remain');

      // The submitted source and its sent message are gone too.
      assert.equal(await count(t, 'email_sources', submitted), 0);
      assert.equal(await count(t, 'sent_messages', submitted), 0);

      // The received email keeps its fields; its html, text, bytes and attachments are gone.
      const got = (await requestJson(t, 'GET', `/emails/receiving/${received}`)).body;
      assert.equal(got.subject, 'Received');
      assert.equal(got.html, null);
      assert.equal(got.text, null);
      assert.equal(got.raw, null);
      assert.deepEqual(got.attachments, []);
      assert.equal(typeof got.body_removed_at, 'string');
      assert.equal(await rowCount(t, 'received_messages'), 0);
      assert.equal(await rowCount(t, 'received_attachments'), 0);
      const rawLink = downloadLink(t.ctx, { kind: 'received-message', id: received });
      const rawDownload = await followLink(t, rawLink.download_url);
      assert.equal(rawDownload.status, 404);
      assert.match(((await rawDownload.json()) as { message: string }).message, REMOVED);

      // Webhook attempts of 31 days ago are gone, the recent ones and every message stay.
      assert.equal(await rowCount(t, 'webhook_attempts'), recentAttempts);
      assert.equal(await rowCount(t, 'webhook_messages'), messages + recentAttempts);

      // The DMARC report of 31 days ago is gone with its rows; the recent one stays.
      const reports = await t.ctx.db.selectFrom('dmarc_reports').select('report_id').execute();
      assert.deepEqual(reports.map((r) => r.report_id), ['recent-report']);
      assert.equal(await rowCount(t, 'dmarc_report_rows'), 1);

      // Untouched: the recent email, the email still being retried for one recipient, the scheduled one.
      const kept = (await t.resend.emails.get(recent)).data! as unknown as Record<string, unknown>;
      assert.equal(kept.html, '<p>recent</p>');
      assert.equal(kept.body_removed_at, undefined);
      assert.equal(await count(t, 'email_attachments', recent), 1);
      assert.equal(await count(t, 'sent_messages', recent), 1);
      assert.equal((await t.resend.emails.get(deferred)).data!.text, 'deferred');
      assert.ok(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `send-email:${deferred}`).executeTakeFirst(), 'still retried');
      const pending = (await t.resend.emails.get(scheduled)).data!;
      assert.equal(pending.last_event, 'scheduled');
      assert.equal(pending.text, 'scheduled');
    });

    it('the dashboard says the body is gone, on the email and received pages', withBrowser, async () => {
      const browser = await launchBrowser();
      try {
        const page = await signedIn(browser, t);
        const [old] = (await t.ctx.db.selectFrom('emails').select('id').where('body_removed_at', 'is not', null).execute()).map((r) => r.id);
        await page.goto(`/dashboard/emails/${old}`);
        assert.match(await page.locator('main').innerText(), /Body removed after 30 days \(MAILROOM_RETENTION_DAYS\)/);
        assert.equal(await page.locator('iframe.message').count(), 0);
        const [received] = (await t.ctx.db.selectFrom('received_emails').select('id').execute()).map((r) => r.id);
        await page.goto(`/dashboard/received/${received}`);
        assert.match(await page.locator('main').innerText(), /Body removed after 30 days \(MAILROOM_RETENTION_DAYS\)/);
        assert.equal(await page.locator('iframe.message').count(), 0);
      } finally {
        await browser.close();
      }
    });

    it('adds the job once, however many workers start', async () => {
      // Two worker processes as `npm start -- --role worker` runs them, and this app's context, at once.
      const ports = [await freePort(), await freePort()];
      const children = ports.map((port) => startMailroomProcess({ ...configEnv(t.ctx), WORKER_HEALTH_PORT: String(port), HOST: '127.0.0.1' }, 'worker'));
      try {
        await scheduleRetention(t.ctx);
        // A worker is healthy once its runner has started, which is after it added the job.
        for (const port of ports) await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok, 30_000);
        const rows = await t.ctx.db.selectFrom('jobs').select('id').where('task', '=', 'retention').execute();
        assert.equal(rows.length, 1);
        assert.ok(children.every((child) => child.exitCode === null), 'both workers run');
      } finally {
        for (const child of children) child.kill('SIGKILL');
        await Promise.all(children.map(exited));
      }
    });
  });

  describe(`retention batches and the SQLite file (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect);
    });
    after(() => t?.close());

    it('removes more than one batch, at most a batch per transaction, and hands the pages back', async (test) => {
      const content = Buffer.alloc(8192, 'x').toString('base64');
      const email = (i: number) => ({ from: 'a@example.com', to: 'b@example.org', subject: `n${i}`, text: 'x'.repeat(4000), attachments: [{ filename: 'x.bin', content }] });
      // The batch API takes no attachments: single sends, 600 of them, 20 at a time.
      for (let i = 0; i < 600; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => t.resend.emails.send(email(i + j))));
      await eventually(async () => Number((await t.ctx.db.selectFrom('emails').select((eb) => eb.fn.countAll<number>().as('n')).where('last_event', '=', 'delivered').executeTakeFirstOrThrow()).n) === 600, 60_000);
      const pages = async () => Number((await sql<{ page_count: number }>`pragma page_count`.execute(t.ctx.db)).rows[0]!.page_count);
      const full = isPostgres(t.ctx.db) ? 0 : await pages();

      t.advance(31 * DAY);
      const first = await t.ctx.writer.transaction((tx) => RETENTION_STEPS.emails!(t.ctx, tx, t.clock.now()));
      assert.deepEqual(first, { removed: RETENTION_BATCH, more: true });
      assert.equal(await rowCount(t, 'email_attachments'), 600 - RETENTION_BATCH);

      await scheduleRetention(t.ctx);
      await nextRun(t);
      assert.equal(await rowCount(t, 'email_attachments'), 0);
      assert.equal(await rowCount(t, 'email_contents'), 0);
      assert.equal(await rowCount(t, 'sent_messages'), 0);
      assert.equal(await rowCount(t, 'emails'), 600);

      if (!isPostgres(t.ctx.db)) {
        assert.equal((await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(t.ctx.db)).rows[0]!.auto_vacuum, 2, 'incremental');
        assert.equal((await sql<{ freelist_count: number }>`pragma freelist_count`.execute(t.ctx.db)).rows[0]!.freelist_count, 0);
        const now = await pages();
        // 600 attachments of 8 KB and bodies of 4 KB: over 7 MB handed back.
        assert.ok(full - now > 1800, `pages: ${full} before, ${now} after`);
        test.diagnostic(`SQLite pages: ${full} before retention, ${now} after, none free`);
      }
    });
  });

  describe(`retention kept forever, and idempotency keys (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { env: { MAILROOM_RETENTION_DAYS: '0' } });
      await scheduleRetention(t.ctx);
      await nextRun(t);
    });
    after(() => t?.close());

    it('keeps every body with MAILROOM_RETENTION_DAYS=0, and forgets idempotency keys after 24 hours all the same', async () => {
      const first = (await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Kept', text: 'kept', attachments: [attachment] }, { idempotencyKey: 'k1' })).data!.id;
      await eventually(async () => (await t.resend.emails.get(first)).data?.last_event === 'delivered');
      const again = (await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Kept', text: 'kept', attachments: [attachment] }, { idempotencyKey: 'k1' })).data!.id;
      assert.equal(again, first, 'within 24 hours: the same answer');
      assert.equal(await rowCount(t, 'idempotency_keys'), 1);

      await runRetention(t, 400 * DAY);
      assert.equal((await t.resend.emails.get(first)).data!.text, 'kept');
      assert.equal(await rowCount(t, 'email_attachments'), 1);
      assert.equal(await rowCount(t, 'sent_messages'), 1);
      assert.equal(await rowCount(t, 'idempotency_keys'), 0, 'the expired key is purged by the run');

      const reused = (await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Kept', text: 'kept', attachments: [attachment] }, { idempotencyKey: 'k1' })).data!.id;
      assert.notEqual(reused, first, 'after 24 hours the key is a new request');
    });
  });
}
