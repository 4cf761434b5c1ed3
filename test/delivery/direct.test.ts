import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { authenticate } from 'mailauth';
import { backoffMs } from '../../src/jobs/task.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { HOSTNAME, verifiedDomain } from '../support/domain-setup.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// Direct delivery end to end: a DNS server and SMTP servers posing as recipients' MX hosts, all
// started here. Every MX host listens on the same port (DIRECT_SMTP_PORT) on its own 127.0.0.x.

type Event = { type: string; recipient: string | null; response: string | null };

async function events(t: TestApp, id: string): Promise<Event[]> {
  return ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: Event[] }).data;
}

async function lastEvent(t: TestApp, id: string, event: string) {
  return eventually(async () => (await t.resend.emails.get(id)).data?.last_event === event || undefined);
}

for (const dialect of dialects) {
  describe(`direct delivery to recipients' mail servers (${dialect})`, () => {
    let dns: TestDnsServer;
    let mx: TestSmtpServer; // 127.0.0.1, no STARTTLS
    let mx2: TestSmtpServer; // 127.0.0.2
    let tlsMx: TestSmtpServer; // 127.0.0.3, offers STARTTLS
    let t: TestApp;
    let open = 0;
    let mostOpen = 0;
    const base = { from: 'Acme <hello@sender.test>', subject: 'Hello', html: '<p>Hello</p>' };

    before(async () => {
      dns = await startDnsServer();
      mx = await startSmtpServer({
        onConnect(_session, callback) {
          mostOpen = Math.max(mostOpen, ++open);
          callback();
        },
        onClose() {
          open--;
        },
      });
      mx2 = await startSmtpServer({}, { host: '127.0.0.2', port: mx.port });
      tlsMx = await startSmtpServer({ disabledCommands: [] }, { host: '127.0.0.3', port: mx.port });
      dns.add(HOSTNAME, { A: ['127.0.0.1'] });
      for (const [domain, host, ip] of [['dest.test', 'mx.dest.test', '127.0.0.1'], ['one.test', 'mx.one.test', '127.0.0.1'], ['two.test', 'mx.two.test', '127.0.0.1'], ['tls.test', 'mx.tls.test', '127.0.0.3']]) {
        dns.add(domain!, { MX: [{ exchange: host!, priority: 10 }] });
        dns.add(host!, { A: [ip!] });
      }
      t = await startApp(dialect, {
        env: { DELIVERY_MODE: 'direct', DIRECT_SMTP_PORT: String(mx.port), DIRECT_MAX_CONNECTIONS: '2', DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME },
      });
      await verifiedDomain(t, dns, 'sender.test');
      await verifiedDomain(t, dns, 'strict.test', { tls: 'enforced' });
    });
    after(async () => {
      await t.close();
      await Promise.all([mx.close(), mx2.close(), tlsMx.close(), dns.close()]);
    });
    afterEach(() => {
      for (const server of [mx, mx2, tlsMx]) {
        server.messages.length = 0;
        server.onRecipient = () => undefined;
        server.onMessage = () => undefined;
        server.delayMs = 0;
      }
    });

    it('delivers to the MX with MAIL FROM on the return-path subdomain; DKIM, SPF and DMARC pass', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'User <user@dest.test>' });
      await lastEvent(t, data!.id, 'delivered');
      const [message] = mx.messages;
      assert.deepEqual(message!.to, ['user@dest.test']);
      assert.match(message!.from, new RegExp(`^bounces\\+${data!.id.replaceAll('-', '')}[0-9a-f]{16}@send\\.sender\\.test$`));
      const result = await authenticate(message!.raw, {
        ip: '127.0.0.1',
        helo: HOSTNAME,
        sender: message!.from,
        mta: 'mx.dest.test',
        resolver: (name: string, type: string) => dns.resolver.resolve(name, type) as Promise<string[]>,
      });
      assert.equal(result.dkim.results[0]!.status.result, 'pass');
      assert.equal(result.dkim.results[0]!.signingDomain, 'sender.test');
      assert.equal(result.spf && result.spf.status.result, 'pass');
      assert.equal(result.dmarc && result.dmarc.status.result, 'pass');
      assert.match((await events(t, data!.id)).at(-1)!.response!, /^250/);
    });

    it('requires a verified from domain by default in direct mode', async () => {
      const { error } = await t.resend.emails.send({ ...base, from: 'a@unverified.test', to: 'user@dest.test' });
      assert.equal(error?.statusCode, 403);
      assert.match(error.message, /unverified\.test domain is not verified/);
    });

    it('sends each recipient a transaction of its own (its VERP sender), the message signed once', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: ['a@one.test', 'b@one.test'], cc: 'c@two.test' });
      await lastEvent(t, data!.id, 'delivered');
      assert.equal(mx.messages.length, 3);
      const envelopes = mx.messages.map((m) => m.to.join(',')).sort();
      assert.deepEqual(envelopes, ['a@one.test', 'b@one.test', 'c@two.test']);
      const signatures = mx.messages.map((m) => m.parsed.headers.get('dkim-signature'));
      assert.ok(signatures[0]);
      assert.deepEqual(signatures[0], signatures[1], 'the same signature, made once');
    });

    it('tries mail servers in preference order, past one that is down, and falls back to A without MX', async () => {
      dns.add('pref.test', {
        MX: [{ exchange: 'mx3.pref.test', priority: 30 }, { exchange: 'down.pref.test', priority: 10 }, { exchange: 'mx2.pref.test', priority: 20 }],
      });
      dns.add('down.pref.test', { A: ['127.0.0.9'] });
      dns.add('mx2.pref.test', { A: ['127.0.0.2'] });
      dns.add('mx3.pref.test', { A: ['127.0.0.1'] });
      dns.add('nomx.test', { A: ['127.0.0.2'] });
      const { data } = await t.resend.emails.send({ ...base, to: 'x@pref.test' });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(mx2.messages.map((m) => m.to), [['x@pref.test']]);
      assert.equal(mx.messages.length, 0);

      const { data: plain } = await t.resend.emails.send({ ...base, to: 'y@nomx.test' });
      await lastEvent(t, plain!.id, 'delivered');
      assert.deepEqual(mx2.messages.map((m) => m.to), [['x@pref.test'], ['y@nomx.test']]);
    });

    it('bounces a domain with a null MX, or one that does not exist', async () => {
      dns.add('nullmx.test', { MX: [{ exchange: '', priority: 0 }] });
      const { data } = await t.resend.emails.send({ ...base, to: ['a@nullmx.test', 'b@nowhere.test'] });
      await lastEvent(t, data!.id, 'bounced');
      const recorded = await events(t, data!.id);
      assert.match(recorded.find((e) => e.recipient === 'a@nullmx.test')!.response!, /^556 5\.1\.10/);
      assert.match(recorded.find((e) => e.recipient === 'b@nowhere.test')!.response!, /^550 5\.1\.2/);
    });

    it('retries a 4xx (delivery_delayed) and bounces a 5xx, per recipient', async () => {
      let tries = 0;
      mx.onRecipient = (address) => {
        if (address === 'gone@dest.test') return { code: 550, message: '5.1.1 No such user' };
        if (address === 'later@dest.test' && tries++ === 0) return { code: 451, message: '4.7.1 Greylisted' };
        return undefined;
      };
      const { data } = await t.resend.emails.send({ ...base, to: ['gone@dest.test', 'later@dest.test'] });
      await lastEvent(t, data!.id, 'delivery_delayed');
      t.advance(3_000);
      await lastEvent(t, data!.id, 'delivered');
      const types = (await events(t, data!.id)).map((e) => `${e.recipient}:${e.type}`);
      assert.deepEqual(types, ['gone@dest.test:bounced', 'later@dest.test:delivery_delayed', 'later@dest.test:sent', 'later@dest.test:delivered']);
    });

    it('STARTTLS: opportunistic uses it when offered and goes on without; enforced refuses a server without it', async () => {
      const { data: secure } = await t.resend.emails.send({ ...base, to: 'a@tls.test' });
      const { data: plain } = await t.resend.emails.send({ ...base, to: 'b@dest.test' });
      const { data: strictSecure } = await t.resend.emails.send({ ...base, from: 'x@strict.test', to: 'c@tls.test' });
      const { data: strictPlain } = await t.resend.emails.send({ ...base, from: 'x@strict.test', to: 'd@dest.test' });
      await lastEvent(t, secure!.id, 'delivered');
      await lastEvent(t, plain!.id, 'delivered');
      await lastEvent(t, strictSecure!.id, 'delivered');
      await lastEvent(t, strictPlain!.id, 'delivery_delayed');
      assert.deepEqual(tlsMx.messages.map((m) => [m.to[0], m.secure]).sort(), [['a@tls.test', true], ['c@tls.test', true]]);
      assert.deepEqual(mx.messages.map((m) => [m.to[0], m.secure]), [['b@dest.test', false]]);
      assert.match((await events(t, strictPlain!.id))[0]!.response!, /STARTTLS|TLS/i);
    });

    it('opens at most DIRECT_MAX_CONNECTIONS connections to one server', async () => {
      mx.delayMs = 200;
      mostOpen = open;
      t.advance(1000); // a fresh window of the default throttle (10 a second): the earlier tests spent some
      const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => t.resend.emails.send({ ...base, to: `n${i}@dest.test` })));
      for (const { data } of sent) await lastEvent(t, data!.id, 'delivered');
      assert.equal(mx.messages.length, 8);
      assert.equal(mostOpen, 2);
    });
  });

  describe(`direct delivery retries for about 72 hours (${dialect})`, () => {
    it('with the default 21 attempts, a 4xx is retried on exp(min(n, 10)) s for about 72 hours, then failed', async () => {
      const dns = await startDnsServer();
      const mx = await startSmtpServer();
      mx.onMessage = () => ({ code: 451, message: '4.3.0 Try again later' });
      dns.add('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
      dns.add('mx.dest.test', { A: ['127.0.0.1'] });
      const t = await startApp(dialect, {
        env: { DELIVERY_MODE: 'direct', MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false', DIRECT_SMTP_PORT: String(mx.port), DNS_SERVERS: dns.address },
      });
      try {
        assert.equal(t.ctx.config.worker.maxAttempts, 21);
        const { data } = await t.resend.emails.send({ from: 'a@anywhere.test', to: 'stuck@dest.test', subject: 's', text: 't' });
        let waited = 0;
        for (let attempt = 1; attempt < 21; attempt++) {
          await eventually(async () => (await events(t, data!.id)).length === attempt || undefined);
          t.advance(backoffMs(attempt));
          waited += backoffMs(attempt);
        }
        await lastEvent(t, data!.id, 'failed');
        const types = (await events(t, data!.id)).map((e) => e.type);
        assert.deepEqual(types, [...Array(20).fill('delivery_delayed'), 'failed']);
        const hours = waited / 3600_000;
        assert.ok(hours > 69 && hours < 75, `${hours} hours`);
      } finally {
        await t.close();
        await mx.close();
        await dns.close();
      }
    });
  });
}
