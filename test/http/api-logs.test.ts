import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend, type GetLogResponseSuccess as Log } from 'resend';
import { omitted, REDACTED } from '../../src/domain/api-logs/redact.ts';
import { RETENTION_STEPS } from '../../src/domain/retention/retention.ts';
import { openDb } from '../../src/store/db.ts';
import { createTestDatabase, dialects, eventually, rowCount, startApp, type Dialect, type TestApp } from '../support/harness.ts';

// The API's request logs over the real app: a run of SDK calls read back through resend.logs, with
// their bodies and without their secrets; what is not recorded; the body limit; retention; the switch.

const ENDPOINT = 'https://93.184.215.14/hook';
const SOME_ID = '0192e3a4-1111-7000-8000-000000000000';
const DAY = 86_400_000;
const SUMMARY_KEYS = ['created_at', 'endpoint', 'id', 'method', 'response_status', 'user_agent'];
const email = { from: 'a@example.com', to: 'b@example.org' };

/** The logs, newest first, once `n` are written (the flusher writes a few hundred milliseconds later). */
const logsOnceThere = (t: TestApp, n: number) =>
  eventually(async () => {
    const { data } = await t.resend.logs.list({ limit: 100 });
    return data!.data.length >= n && data!.data;
  });

/** The rows written to a database a test app has closed. */
async function rowsAfterClose(url: string): Promise<number> {
  const db = openDb(url);
  try {
    return Number((await db.selectFrom('api_logs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  } finally {
    await db.destroy();
  }
}

/** Makes three requests to an app on a database of its own, closes it at once, and counts what was written. */
async function logsWrittenBy(dialect: Dialect, env: Record<string, string>): Promise<number> {
  const database = await createTestDatabase(dialect);
  try {
    const t = await startApp(dialect, { worker: false, database, env });
    await t.resend.emails.send({ ...email, subject: 'One', text: 'one' });
    await t.resend.apiKeys.list();
    await t.resend.domains.list();
    await t.close();
    return await rowsAfterClose(database.url);
  } finally {
    await database.drop();
  }
}

for (const dialect of dialects) {
  describe(`API request logs (${dialect})`, () => {
    let t: TestApp;
    let keyId: string;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      keyId = (await t.ctx.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id;
    });
    after(() => t?.close());

    it('records each SDK call with its bodies, secrets removed, and serves them through resend.logs', async () => {
      const attachmentText = 'the attachment itself, never logged';
      const content = Buffer.from(attachmentText).toString('base64');
      const sent = await t.resend.emails.send({ ...email, subject: 'Logged', html: '<p>hi</p>', attachments: [{ filename: 'notes.txt', content }] });
      const key = await t.resend.apiKeys.create({ name: 'logged' });
      const hook = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['email.bounced'] });
      const got = await t.resend.webhooks.get(hook.data!.id);
      const failed = await t.resend.emails.send({ from: 'not an address', to: 'b@example.org', subject: 'x', text: 'x' });
      assert.equal(failed.error?.statusCode, 422);
      await t.resend.emails.list({ limit: 1 });
      // Not recorded: the metrics, health, a refused key, the logs themselves.
      assert.equal((await t.fetch('/metrics')).status, 200);
      assert.equal((await fetch(`${t.url}/health`)).status, 200);
      assert.equal((await fetch(`${t.url}/emails`, { headers: { authorization: 'Bearer re_unknown_0123456789' } })).status, 403);

      const logs = await logsOnceThere(t, 6);
      assert.deepEqual(
        logs.map((log) => [log.method, log.endpoint, log.response_status]),
        [
          ['GET', '/emails', 200],
          ['POST', '/emails', 422],
          ['GET', `/webhooks/${hook.data!.id}`, 200],
          ['POST', '/webhooks', 201],
          ['POST', '/api-keys', 201],
          ['POST', '/emails', 200],
        ],
      );
      for (const log of logs) {
        assert.deepEqual(Object.keys(log).sort(), SUMMARY_KEYS);
        assert.match(log.user_agent!, /^resend-node:/);
        assert.match(log.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/);
      }
      const full = await Promise.all(logs.map(async (log) => (await t.resend.logs.get(log.id)).data!));
      const [list, invalid, webhookGet, webhookCreate, keyCreate, send] = full as [Log, Log, Log, Log, Log, Log];

      assert.equal(send.object, 'log');
      assert.deepEqual(Object.keys(send).sort(), ['api_key_id', 'duration_ms', 'object', 'request_body', 'response_body', ...SUMMARY_KEYS].sort());
      const extras = send as unknown as { api_key_id: string; duration_ms: number };
      assert.equal(extras.api_key_id, keyId);
      assert.ok(Number.isInteger(extras.duration_ms) && extras.duration_ms >= 0);
      const request = send.request_body as { subject: string; attachments: unknown[] };
      assert.equal(request.subject, 'Logged');
      assert.deepEqual(request.attachments, [{ filename: 'notes.txt', content: REDACTED }]);
      assert.deepEqual(send.response_body, { id: sent.data!.id });

      assert.deepEqual(keyCreate.request_body, { name: 'logged' });
      assert.deepEqual(keyCreate.response_body, { object: 'api_key', id: key.data!.id, token: REDACTED });
      assert.deepEqual(webhookCreate.response_body, { object: 'webhook', id: hook.data!.id, signing_secret: REDACTED });
      assert.equal((webhookGet.response_body as { signing_secret: string }).signing_secret, REDACTED);
      assert.equal((webhookGet.response_body as { endpoint: string }).endpoint, ENDPOINT);
      assert.equal(webhookGet.request_body, null);
      assert.equal((invalid.response_body as { name: string }).name, 'validation_error');
      assert.equal(list.request_body, null);
      assert.equal((list.response_body as { object: string }).object, 'list');

      // Nowhere in the table: the new key's token, the signing secret, the attachment, the caller's own key.
      const raw = JSON.stringify(await t.ctx.db.selectFrom('api_logs').selectAll().execute());
      for (const secret of [key.data!.token, hook.data!.signing_secret, got.data!.signing_secret, content, attachmentText, t.token]) {
        assert.ok(!raw.includes(secret), `${secret} is in the logs`);
      }
      assert.ok(!raw.includes('/logs') && !raw.includes('/metrics') && !raw.includes('/health'));
    });

    it('redacts share links and attachment download links, which are their own credentials', async () => {
      const content = Buffer.from('file').toString('base64');
      const { data } = await t.resend.emails.send({ ...email, subject: 'Shared', text: 'x', attachments: [{ filename: 'a.txt', content }] });
      const share = (await (await t.fetch(`/emails/${data!.id}/share`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { url: string };
      const files = (await (await t.fetch(`/emails/${data!.id}/attachments`)).json()) as { data: { download_url: string }[] };
      const links = [share.url, files.data[0]!.download_url];
      assert.ok(links.every((link) => link.startsWith('http')));
      const logs = await eventually(async () => {
        const { data: page } = await t.resend.logs.list({ limit: 100 });
        const mine = page!.data.filter((log) => log.endpoint.startsWith(`/emails/${data!.id}/`));
        return mine.length === 2 && mine;
      });
      for (const log of logs) {
        const body = (await t.resend.logs.get(log.id)).data!.response_body as { url?: string; data?: { download_url: string }[] };
        assert.equal(body.url ?? body.data![0]!.download_url, REDACTED);
      }
      const raw = JSON.stringify(await t.ctx.db.selectFrom('api_logs').selectAll().execute());
      for (const link of links) assert.ok(!raw.includes(link.slice(-30)), `${link} is in the logs`);
    });

    it('pages newest first with limit, after and before, and answers 404 for an unknown log', async () => {
      const all = await logsOnceThere(t, 6);
      const first = (await t.resend.logs.list({ limit: 2 })).data!;
      assert.equal(first.has_more, true);
      assert.deepEqual(first.data.map((log) => log.id), all.slice(0, 2).map((log) => log.id));
      const next = (await t.resend.logs.list({ limit: 2, after: first.data[1]!.id })).data!;
      assert.deepEqual(next.data.map((log) => log.id), all.slice(2, 4).map((log) => log.id));
      const back = (await t.resend.logs.list({ limit: 2, before: next.data[0]!.id })).data!;
      assert.deepEqual(back.data.map((log) => log.id), all.slice(0, 2).map((log) => log.id));
      assert.deepEqual((await t.resend.logs.get(SOME_ID)).error, { statusCode: 404, name: 'not_found', message: 'Log not found' });
      assert.equal((await t.resend.logs.list({ limit: 0 })).error?.statusCode, 422);
    });

    it('records a sending-access key’s requests under its id, and refuses it the logs', async () => {
      const created = (await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' })).data!;
      const sender = new Resend(created.token, { baseUrl: t.url });
      const sent = await sender.emails.send({ ...email, subject: 'By the sender', text: 'hi' });
      assert.ok(sent.data?.id);
      assert.deepEqual((await sender.logs.list()).error, { statusCode: 401, name: 'restricted_api_key', message: 'This API key is restricted to only send emails.' });
      assert.equal((await sender.logs.get(SOME_ID)).error?.statusCode, 401);
      const [log] = await eventually(async () => {
        const rows = await t.ctx.db.selectFrom('api_logs').selectAll().where('api_key_id', '=', created.id).execute();
        return rows.length > 0 && rows;
      });
      assert.deepEqual([log!.method, log!.endpoint, log!.response_status], ['POST', '/emails', 200]);
      assert.equal(JSON.parse(log!.response_body!).id, sent.data.id);
    });

    it('keeps bodies up to MAILROOM_LOG_BODY_BYTES: long strings cut, a larger body replaced by a marker', async () => {
      const before = await rowCount(t, 'api_logs');
      const html = `<p>${'long '.repeat(4000)}</p>`;
      await t.resend.emails.send({ ...email, subject: 'Long', html });
      const batch = Array.from({ length: 50 }, (_, i) => ({ ...email, subject: `Batch ${i}`, html: `<p>${'b'.repeat(400)}</p>` }));
      assert.ok((await t.resend.batch.send(batch)).data);
      const [batchLog, longLog] = await logsOnceThere(t, before + 2);
      const long = (await t.resend.logs.get(longLog!.id)).data!.request_body as { subject: string; html: string };
      assert.equal(long.subject, 'Long');
      assert.match(long.html, /… \[\d+ characters cut\]$/);
      assert.ok(long.html.length < html.length);
      assert.equal(batchLog!.endpoint, '/emails/batch');
      assert.deepEqual((await t.resend.logs.get(batchLog!.id)).data!.request_body, omitted(t.ctx.config.apiLogs.bodyBytes));
    });

    it('removes logs older than MAILROOM_RETENTION_DAYS; 0 keeps them', async () => {
      const old = await rowCount(t, 'api_logs');
      t.clock.advance(31 * DAY);
      await t.resend.domains.list();
      const [recent] = await logsOnceThere(t, old + 1);
      const step = (ctx: typeof t.ctx) => t.ctx.writer.transaction((tx) => RETENTION_STEPS.api_logs!(ctx, tx, t.clock.now()));
      assert.deepEqual(await step({ ...t.ctx, config: { ...t.ctx.config, retentionDays: 0 } }), { removed: 0, more: false });
      assert.deepEqual(await step(t.ctx), { removed: old, more: false });
      assert.deepEqual((await t.resend.logs.list()).data!.data.map((log) => log.id), [recent!.id]);
    });
  });

  describe(`API request logs at shutdown and switched off (${dialect})`, () => {
    it('writes what waits when the app closes, before the next flush was due', async () => {
      assert.equal(await logsWrittenBy(dialect, {}), 3);
    });

    it('records nothing with MAILROOM_API_LOGS=false', async () => {
      assert.equal(await logsWrittenBy(dialect, { MAILROOM_API_LOGS: 'false' }), 0);
    });
  });
}
