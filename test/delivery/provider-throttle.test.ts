import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// The mailbox providers' default limits in direct mode (config.ts PROVIDER_THROTTLES), matched by the
// suffix of the recipient domain's MX host: yahoo.test and aol.test have MX hosts under yahoodns.net
// (5/s between them), other.test one of its own (10/s). The test clock stands still: no budget refills.

async function sendTo(t: TestApp, to: string): Promise<string> {
  const { data, error } = await t.resend.emails.send({ from: 'a@sender.test', to, subject: 'Hello', text: 'Hello' });
  assert.equal(error, null);
  return data.id;
}

/** The send-email jobs put back by a worker to run later, once every other one is done. */
async function heldJobs(t: TestApp): Promise<number> {
  const jobs = await eventually(async () => {
    const rows = await t.ctx.db.selectFrom('jobs').selectAll().where('task', '=', 'send-email').execute();
    return rows.every((job) => job.locked_by === null && Number(job.run_at) > t.clock.now()) && rows;
  });
  return jobs.length;
}

for (const dialect of dialects) {
  describe(`mailbox provider limits by MX host (${dialect})`, () => {
    let dns: TestDnsServer;
    let mx: TestSmtpServer;
    let t: TestApp;

    before(async () => {
      dns = await startDnsServer();
      mx = await startSmtpServer();
      for (const [domain, host] of [['yahoo.test', 'mta5.am0.yahoodns.net'], ['aol.test', 'mx-aol.mail.gm0.yahoodns.net'], ['other.test', 'mx.other.test']]) {
        dns.add(domain!, { MX: [{ exchange: host!, priority: 1 }] });
        dns.add(host!, { A: ['127.0.0.1'] });
      }
      t = await startApp(dialect, {
        env: { DELIVERY_MODE: 'direct', MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false', DIRECT_SMTP_PORT: String(mx.port), DNS_SERVERS: dns.address },
      });
    });
    after(async () => {
      await t.close();
      await Promise.all([mx.close(), dns.close()]);
    });

    it("gives Yahoo's MX hosts one budget of 5 a second by default, and a host no provider rule names its own", async () => {
      for (let i = 0; i < 6; i++) await sendTo(t, `user${i}@other.test`);
      await eventually(() => mx.messages.length === 6);
      assert.equal(await heldJobs(t), 0, 'other.test takes 6 under its own 10 a second');

      for (let i = 0; i < 4; i++) await sendTo(t, `user${i}@yahoo.test`);
      for (let i = 0; i < 3; i++) await sendTo(t, `user${i}@aol.test`);
      assert.equal(await heldJobs(t), 2, "two of seven wait: yahoo.test's and aol.test's hosts share Yahoo's 5");
      assert.equal(mx.messages.length, 11);

      t.advance(2000);
      await eventually(() => mx.messages.length === 13);
      assert.equal(await heldJobs(t), 0);
    });
  });
}
