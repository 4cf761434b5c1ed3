import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listenWorkerHealth } from '../src/monitoring/worker-health.ts';
import { launchBrowser, signedIn, withBrowser } from './support/browser.ts';
import { CONCURRENCY, FAULTS, startFaultRig, type FaultName, type FaultRig, type FaultReport } from './support/fault-rig.ts';
import { eventually, freePort, startApp } from './support/harness.ts';
import { clusterUnavailable, startPostgresCluster } from './support/postgres-cluster.ts';
import { startSmtpServer } from './support/smtp-server.ts';
import { startSubmission, submissionClient } from './support/submission.ts';

// Every fault of PostgreSQL an operator meets, injected in turn under a steady stream of email: the
// API and the worker run as processes of their own on a cluster of the test's own. After each, both
// still run, every accepted email is delivered (twice at most for the sends under way when it struck),
// every answer meanwhile was a 503 in the error shape with Retry-After or SMTP's 451 4.3.0, and each
// process logged one line when the database went away and one when it came back.

const unavailable = clusterUnavailable();
const ORDER: FaultName[] = ['restart', 'terminate', 'outage', 'crash', 'read-only', 'hang'];

const seconds = (ms: number | undefined) => (ms === undefined ? 'none delayed' : `${(ms / 1000).toFixed(1)} s`);

describe('PostgreSQL faults under load', { skip: unavailable && `no PostgreSQL cluster of the test's own: ${unavailable}`, timeout: 230_000 }, () => {
  let rig: FaultRig;
  before(async () => {
    rig = await startFaultRig();
  });
  after(async () => {
    await rig?.close();
  });

  for (const fault of ORDER) {
    it(`${fault} (${FAULTS[fault]}): no process exits, every accepted email is delivered, every answer meanwhile is 503 or 451`, async (t) => {
      const report: FaultReport = await rig.inject(fault);
      const answers = [...report.answers].map(([kind, n]) => `${kind}: ${n}`).join(', ');
      t.diagnostic(
        `${fault}: from the database's return to the first delayed delivery ${seconds(report.firstMs)}, to the last ${seconds(report.lastMs)}; ` +
          `answers meanwhile ${answers || 'none'}; ${report.duplicates} delivered twice`,
      );
      assert.ok(report.running, `a Mailroom process exited:\n${rig.stderr()}`);
      assert.deepEqual(report.forbidden, [], 'every answer was 200 or 503 in the error shape with Retry-After (HTTP), 250 or 451 4.3.0 (SMTP)');
      assert.ok(report.duplicates <= CONCURRENCY, `${report.duplicates} emails delivered twice: more than the ${CONCURRENCY} sends a worker has under way`);
      for (const [name, lines] of Object.entries(report.lines)) {
        assert.ok(lines.down <= 1, `the ${name} process logged the database going away ${lines.down} times`);
        assert.equal(lines.back, lines.down, `the ${name} process logged the database's return once for each time it went away`);
      }
    });
  }
});

describe('while PostgreSQL is stopped', { skip: unavailable && `no PostgreSQL cluster of the test's own: ${unavailable}` }, () => {
  it('every way in says so and passes: the API 503 with Retry-After, GET /health 503 naming the database, SMTP 451 4.3.0, the dashboard a page, mailroom_database_up 0; all work again once it is back', async () => {
    const cluster = await startPostgresCluster();
    const sink = await startSmtpServer();
    const t = await startApp('postgres', { database: { url: cluster.url, drop: async () => {} }, env: { SMTP_URL: sink.url } });
    const submission = await startSubmission(t);
    const smtp = submissionClient(submission.port, t.token);
    const workerHealth = await listenWorkerHealth(t.ctx, t.runner!, await freePort(), '127.0.0.1');
    const workerHealthUrl = `http://127.0.0.1:${(workerHealth.address() as AddressInfo).port}/health`;
    const browser = withBrowser.skip ? undefined : await launchBrowser();
    const message = { from: 'sender@example.com', to: 'rcpt@example.net', subject: 'while stopped', text: 'x' };
    try {
      const page = browser && (await signedIn(browser, t));
      await eventually(async () => (await fetch(workerHealthUrl)).ok);
      // A scrape before the outage, as Prometheus's are: its key is known when the database is away.
      assert.match(await (await t.fetch('/metrics')).text(), /^mailroom_database_up 1$/m);
      await cluster.stop('fast');

      const sent = await t.fetch('/emails', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
      assert.equal(sent.status, 503);
      assert.equal(sent.headers.get('retry-after'), '5');
      const body = (await sent.json()) as { statusCode: number; name: string; message: string };
      assert.deepEqual(body, { statusCode: 503, name: 'service_unavailable', message: 'Mailroom cannot reach its database right now; try again in a few seconds.' });

      const health = await fetch(`${t.url}/health`);
      assert.equal(health.status, 503);
      const said = (await health.json()) as { status: string; database: string; message: string };
      assert.equal(said.status, 'unavailable');
      assert.equal(said.database, 'unavailable');
      assert.match(said.message, /^The database is unavailable \(since /);
      const worker = await fetch(workerHealthUrl);
      assert.equal(worker.status, 503);
      assert.equal(((await worker.json()) as { database: string }).database, 'unavailable');

      const refused = await smtp.sendMail(message).then(
        () => undefined,
        (error: { responseCode: number; response: string }) => error,
      );
      assert.equal(refused?.responseCode, 451);
      assert.match(refused.response, /^451 4\.3\.0 Mailroom cannot reach its database/);

      // Past the second for which a key found is trusted without asking the database again.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const metrics = await (await t.fetch('/metrics')).text();
      assert.match(metrics, /^mailroom_database_up 0$/m);

      if (page) {
        const shown = await page.goto('/dashboard/emails');
        assert.equal(shown?.status(), 503);
        assert.match(await page.locator('main').innerText(), /Mailroom cannot reach its database right now/);
      }

      await cluster.start();
      await eventually(async () => (await fetch(`${t.url}/health`)).ok, 30_000);
      await eventually(async () => (await fetch(workerHealthUrl)).ok, 30_000);
      const { data } = await t.resend.emails.send(message);
      await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered', 30_000);
      assert.match((await smtp.sendMail(message)).response, /^250 2\.0\.0 OK /);
      assert.match(await (await t.fetch('/metrics')).text(), /^mailroom_database_up 1$/m);
      if (page) assert.equal((await page.goto('/dashboard/emails'))?.status(), 200);
    } finally {
      await browser?.close();
      smtp.close();
      workerHealth.close();
      await submission.close();
      await t.close();
      await sink.close();
      await cluster.destroy();
    }
  });
});
