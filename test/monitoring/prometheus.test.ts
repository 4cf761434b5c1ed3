import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listenSmtpHealth } from '../../src/smtp/health.ts';
import { listenWorkerHealth } from '../../src/monitoring/worker-health.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp, type TestApp } from '../support/harness.ts';
import { exited, listening, startMailroomProcess } from '../support/processes.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** The value of one sample of Prometheus's text format, e.g. `mailroom_email_events_total{event="delivered"}`; a series not there fails. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line !== undefined, `no ${series} in the scrape`);
  return Number(line.slice(series.length + 1));
}

/** As sample, but 0 for a series not there yet: a labelled counter appears with its first count. */
const sampleOrZero = (text: string, series: string) => (text.split('\n').some((l) => l.startsWith(`${series} `)) ? sample(text, series) : 0);

/** The metrics the table of docs/operations.md lists: each name (a prefix when it ends in `*`) with its type. */
function documentedMetrics(): { name: string; type: string }[] {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Metrics (Prometheus)'))!;
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `mailroom_'))
    .flatMap((line) => {
      const [, names, type] = line.split('|').map((cell) => cell.trim());
      return [...names!.matchAll(/`(mailroom_[\w*]+)`/g)].map((match) => ({ name: match[1]!, type: type! }));
    });
}

/** Every metric documented is in `text`, declared with its documented type, and with a sample at least. */
function assertDocumented(text: string): void {
  const lines = text.split('\n');
  const metrics = documentedMetrics();
  assert.ok(metrics.length >= 10, `only ${metrics.length} metrics read from docs/operations.md`);
  for (const { name, type } of metrics) {
    if (name.endsWith('*')) {
      assert.ok(lines.some((line) => line.startsWith(`# TYPE ${name.slice(0, -1)}`)), `no ${name} in the scrape`);
      continue;
    }
    assert.ok(lines.includes(`# TYPE ${name} ${type}`), `${name} is not in the scrape as a ${type}`);
    const series = type === 'histogram' ? `${name}_count` : name;
    assert.ok(lines.some((line) => line.startsWith(`${series}{`) || line.startsWith(`${series} `)), `no sample of ${name} in the scrape`);
  }
}

for (const dialect of dialects) {
  describe(`GET /metrics (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
      // One request a second on the public routes: the second in a second is refused, and counted.
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', MAILROOM_PUBLIC_RATE_LIMIT: '1' } });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    const scrape = async (token = t.token) => {
      const response = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    };

    it('is refused without a full-access key', async () => {
      assert.equal((await fetch(`${t.url}/metrics`)).status, 401);
      const sending = (await t.resend.apiKeys.create({ name: 'sending', permission: 'sending_access' })).data!.token;
      const refused = await scrape(sending);
      assert.equal(refused.status, 401);
      assert.equal(JSON.parse(refused.text).name, 'restricted_api_key');
    });

    it('counts requests, email events, deliveries, webhook attempts, SMTP sessions and refusals, reads the queue, and has every metric the operations doc lists', async () => {
      const before = (await scrape()).text;
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.delivered'] });
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 's', text: 'x' });
      await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered');
      await eventually(() => receiver.received.length >= 1);

      const submission = await startSubmission(t);
      try {
        const info = await submissionClient(submission.port, t.token).sendMail({ from: 'a@example.com', to: 'c@example.com', subject: 's', text: 'x' });
        await eventually(async () => (await t.resend.emails.get(idOf(info.response)!)).data?.last_event === 'delivered');
      } finally {
        await submission.close();
      }
      // Both delivered events' webhooks are counted before the runner stops: it runs their attempts.
      await eventually(async () => sample((await scrape()).text, 'mailroom_webhook_attempts_total{outcome="success"}') >= 2);
      // The clock's second allows one request to a public route, not two.
      assert.deepEqual([(await fetch(`${t.url}/unsubscribe/not-a-token`)).status, (await fetch(`${t.url}/unsubscribe/not-a-token`)).status], [404, 429]);
      // A job due in the future is not due yet; one due now that no worker holds is.
      await t.runner!.stop(1000);
      await t.resend.emails.send({ from: 'a@example.com', to: 'd@example.com', subject: 's', text: 'x' });

      const now = await scrape();
      assert.equal(now.status, 200);
      assert.match(now.type!, /^text\/plain; version=0\.0\.4/);
      const grew = (series: string) => sample(now.text, series) - sampleOrZero(before, series);
      assert.equal(grew('mailroom_http_requests_total{method="POST",route="/emails",status="200"}'), 2);
      assert.equal(grew('mailroom_email_events_total{event="delivered"}'), 2, 'the API send and the submitted one');
      assert.equal(grew('mailroom_delivery_latency_seconds_count{outcome="delivered"}'), 2);
      assert.ok(grew('mailroom_webhook_attempts_total{outcome="success"}') >= 2, 'both delivered events');
      assert.equal(grew('mailroom_smtp_sessions_total{server="submission"}'), 1);
      assert.equal(grew('mailroom_http_client_limited_total{limit="public_rate",action="refused"}'), 1);
      assert.equal(sample(now.text, 'mailroom_jobs_due{task="send-email"}'), 1);
      assert.ok(now.text.includes('mailroom_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/emails"}'));
      assert.ok(now.text.includes('mailroom_process_cpu_seconds_total'), "the process's own metrics");
      assert.ok(!now.text.includes(t.token), 'no secret in the scrape');
      assertDocumented(now.text);
      t.runner!.start();
    });

    it('reads how long the oldest due job has waited', async () => {
      await t.runner!.stop(1000);
      try {
        await t.resend.emails.send({ from: 'a@example.com', to: 'e@example.com', subject: 's', text: 'x' });
        t.clock.advance(5000);
        assert.equal(sample((await scrape()).text, 'mailroom_jobs_oldest_due_age_seconds{task="send-email"}'), 5);
      } finally {
        t.runner!.start();
      }
    });

    it("is served by a worker's health port, with the same key", async () => {
      const server = await listenWorkerHealth(t.ctx, new Runner(t.ctx, tasks), 0, '127.0.0.1');
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        assert.equal((await fetch(`${base}/metrics`)).status, 401);
        const answer = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${t.token}` } });
        assert.equal(answer.status, 200);
        assert.match(await answer.text(), /mailroom_jobs_due/);
      } finally {
        server.close();
        server.closeAllConnections();
      }
    });

    it("is served by the SMTP listeners' health port, with the same key, beside a health check of the database", async () => {
      const server = await listenSmtpHealth(t.ctx, 0, '127.0.0.1');
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const health = await fetch(`${base}/health`);
        assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
        assert.equal((await fetch(`${base}/metrics`)).status, 401);
        const answer = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${t.token}` } });
        assert.equal(answer.status, 200);
        assert.match(await answer.text(), /mailroom_smtp_sessions_total/);
        assert.equal((await fetch(`${base}/emails`)).status, 404);
      } finally {
        server.close();
        server.closeAllConnections();
      }
    });
  });

  describe(`GET /metrics of an smtp-only process, on SMTP_HEALTH_PORT (${dialect})`, () => {
    it('counts the submission sessions of a process that opens no HTTP port of the API', async () => {
      const database = await createTestDatabase(dialect);
      const setup = await startApp(dialect, { database, worker: false });
      const [apiPort, submissionPort, healthPort] = [await freePort(), await freePort(), await freePort()];
      const env = { ...configEnv(setup.ctx), HOST: '127.0.0.1', PORT: String(apiPort), SUBMISSION_PORT: String(submissionPort), SMTP_HEALTH_PORT: String(healthPort) };
      const token = setup.token;
      await setup.close();
      const child = startMailroomProcess(env, 'smtp');
      try {
        const base = `http://127.0.0.1:${healthPort}`;
        await eventually(async () => (await fetch(`${base}/health`).catch(() => undefined))?.ok && (await listening(submissionPort)), 30_000);
        assert.equal(await listening(apiPort), false, 'no API port');
        const client = submissionClient(submissionPort, token);
        const info = await client.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: 's', text: 'x' });
        client.close();
        assert.ok(idOf(info.response));
        const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(scraped.status, 200);
        assert.equal(sample(await scraped.text(), 'mailroom_smtp_sessions_total{server="submission"}'), 1);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        await database.drop();
      }
    });
  });
}
