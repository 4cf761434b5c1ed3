import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const LOGIN = 'mailer@relay.test';

/**
 * A relay like Google Workspace's and Microsoft 365's: it takes only its login, and only that login as
 * the envelope sender; any other is refused at MAIL FROM.
 */
function strictRelay(): Promise<TestSmtpServer> {
  return startSmtpServer({
    authOptional: false,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      const ok = auth.username === LOGIN && auth.password === 'secret';
      callback(ok ? null : new Error('Invalid credentials'), ok ? { user: auth.username } : undefined);
    },
    onMailFrom(address, session, callback) {
      if (address.address === session.user) return callback();
      callback(Object.assign(new Error(`5.7.1 <${address.address}>: Sender address rejected: not owned by user ${String(session.user)}`), { responseCode: 553 }));
    },
  });
}

const lastEvent = (t: TestApp, id: string, expected: string) => eventually(async () => (await t.resend.emails.get(id)).data?.last_event === expected || undefined);

for (const dialect of dialects) {
  describe(`the envelope sender through a strict relay (${dialect})`, () => {
    let relay: TestSmtpServer;
    const apps: TestApp[] = [];
    const app = async (env: Record<string, string>) => {
      const t = await startApp(dialect, { env: { SMTP_URL: `smtp://${encodeURIComponent(LOGIN)}:secret@127.0.0.1:${relay.port}`, ...env } });
      apps.push(t);
      return t;
    };
    before(async () => {
      relay = await strictRelay();
    });
    after(async () => {
      for (const t of apps) await t.close();
      await relay.close();
    });

    it('sends with `sender` (the default): the From address, one transaction for all recipients', async () => {
      const t = await app({});
      const { data } = await t.resend.emails.send({ from: `Mailer <${LOGIN}>`, to: ['a@example.com', 'b@example.com'], subject: 'Hi', text: 'Hi' });
      await lastEvent(t, data!.id, 'delivered');
      const copies = relay.messages.filter((m) => m.parsed.messageId === `<${data!.id}@relay.test>`);
      assert.deepEqual(copies.map((m) => [m.from, m.to]), [[LOGIN, ['a@example.com', 'b@example.com']]]);
    });

    it('sends with `login`: SMTP_URL’s user as the envelope sender, whatever the From address', async () => {
      const t = await app({ RELAY_ENVELOPE_SENDER: 'login' });
      const { data } = await t.resend.emails.send({ from: 'News <news@example.com>', to: ['c@example.com', 'd@example.com'], subject: 'Hi', text: 'Hi' });
      await lastEvent(t, data!.id, 'delivered');
      const copies = relay.messages.filter((m) => m.parsed.messageId === `<${data!.id}@example.com>`);
      assert.deepEqual(copies.map((m) => [m.from, m.to]), [[LOGIN, ['c@example.com', 'd@example.com']]]);
    });

    it('with `verp` the relay refuses the sender: the email fails, no one is suppressed, and repeated it pauses delivery and says so', async (context) => {
      const t = await app({ RELAY_ENVELOPE_SENDER: 'verp' });
      for (const to of ['one@example.com', 'two@example.com', 'three@example.com']) {
        const { data } = await t.resend.emails.send({ from: 'news@example.com', to, subject: 'Hi', text: 'Hi' });
        await lastEvent(t, data!.id, 'failed');
        const { body } = await requestJson(t, 'GET', `/emails/${data!.id}/events`);
        const failed = (body.data as { type: string; response: string }[]).find((e) => e.type === 'failed')!;
        assert.match(failed.response, /^553 5\.7\.1 .*Sender address rejected/);
        assert.equal((await t.resend.suppressions.get(to)).error?.statusCode, 404, `${to} is not suppressed`);
      }
      assert.equal((await t.resend.suppressions.list()).data?.data.length, 0);

      // Three refusals in a row pause the relay: the next email waits instead of failing.
      const { data: waiting } = await t.resend.emails.send({ from: 'news@example.com', to: 'four@example.com', subject: 'Hi', text: 'Hi' });
      await lastEvent(t, waiting!.id, 'delivery_delayed');
      const { body: events } = await requestJson(t, 'GET', `/emails/${waiting!.id}/events`);
      assert.match((events.data as { response: string }[])[0]!.response, /the relay 127\.0\.0\.1:\d+ is paused: it refuses our login or envelope sender \(553/);

      // The worker's next heartbeat carries it to GET /health (still 200: the API accepts mail) and the dashboard.
      t.advance(5_000);
      const health = await eventually(async () => {
        const answer = await requestJson(t, 'GET', '/health');
        return answer.body.delivery === 'paused' ? answer : undefined;
      });
      assert.equal(health.status, 200);
      assert.match(health.body.delivery_message, /refuses our login or envelope sender/);
      if (typeof withBrowser.skip === 'string') return context.diagnostic(withBrowser.skip);
      const browser = await launchBrowser();
      try {
        const page = await signedIn(browser, t);
        assert.match(await page.getByRole('status').innerText(), /^Delivery is paused\. Delivery to the relay 127\.0\.0\.1:\d+ is paused: it refuses our login or envelope sender/);
      } finally {
        await browser.close();
      }
    });
  });
}
