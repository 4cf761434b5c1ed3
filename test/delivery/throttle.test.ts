import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { ConfigError, PROVIDER_THROTTLES, readConfig } from '../../src/config.ts';
import { pushesBack } from '../../src/delivery/smtp-reply.ts';
import { sendJobKey } from '../../src/domain/emails/emails.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// Outbound throttling in direct mode: two SMTP servers on 127.0.0.1 and 127.0.0.2 stand for the
// destinations (the MX hosts of slow.test and busy.test on the first, of fast.test on the second).
// The test clock does not move unless a test moves it, so a budget refills only when it does.

type Event = { type: string; recipient: string | null };

async function events(t: TestApp, id: string): Promise<string[]> {
  const { data } = (await (await t.fetch(`/emails/${id}/events`)).json()) as { data: Event[] };
  return data.map((e) => `${e.recipient}:${e.type}`);
}

async function send(t: TestApp, to: string | string[]): Promise<string> {
  const { data, error } = await t.resend.emails.send({ from: 'a@sender.test', to, subject: 'Hello', text: 'Hello' });
  assert.equal(error, null);
  return data.id;
}

/** The email's job once a worker has put it back: not locked, due later (undefined: done). */
async function waiting(t: TestApp, id: string) {
  return eventually(async () => {
    const job = await t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', sendJobKey(id)).executeTakeFirst();
    return job && job.locked_by === null && Number(job.run_at) > t.clock.now() && job;
  });
}

/** Once every send-email job is done, or put back by a worker to run later. */
async function settled(t: TestApp): Promise<void> {
  await eventually(async () => {
    const jobs = await t.ctx.db.selectFrom('jobs').selectAll().where('task', '=', 'send-email').execute();
    return jobs.every((job) => job.locked_by === null && Number(job.run_at) > t.clock.now());
  });
}

const received = (sink: TestSmtpServer) => sink.messages.map((m) => m.to.join(',')).sort();

for (const dialect of dialects) {
  describe(`outbound throttling per destination (${dialect})`, () => {
    let dns: TestDnsServer;
    let mx: TestSmtpServer; // slow.test and busy.test
    let fastMx: TestSmtpServer; // fast.test
    let t: TestApp;

    before(async () => {
      dns = await startDnsServer();
      mx = await startSmtpServer();
      fastMx = await startSmtpServer({}, { host: '127.0.0.2', port: mx.port });
      for (const [domain, ip] of [['slow.test', '127.0.0.1'], ['busy.test', '127.0.0.1'], ['fast.test', '127.0.0.2']]) {
        dns.add(domain!, { MX: [{ exchange: `mx.${domain}`, priority: 10 }] });
        dns.add(`mx.${domain}`, { A: [ip!] });
      }
      t = await startApp(dialect, {
        env: {
          DELIVERY_MODE: 'direct',
          MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false',
          DIRECT_SMTP_PORT: String(mx.port),
          DNS_SERVERS: dns.address,
          DELIVERY_THROTTLE: 'mx.slow.test=1/s,mx.busy.test=2/s',
        },
      });
    });
    after(async () => {
      await t.close();
      await Promise.all([mx.close(), fastMx.close(), dns.close()]);
    });
    afterEach(() => {
      for (const sink of [mx, fastMx]) {
        sink.messages.length = 0;
        sink.onRecipient = () => undefined;
      }
    });

    it('holds back the mail of a destination over its rate, attempts unchanged and nothing recorded, while other destinations get theirs at once', async () => {
      const first = await send(t, 'a@slow.test');
      await eventually(() => mx.messages.length === 1);

      // One email, two destinations: slow.test's budget is spent, fast.test's recipient goes now.
      const both = await send(t, ['b@slow.test', 'c@fast.test']);
      const job = await waiting(t, both);
      assert.equal(job.attempts, 0, 'a throttle is not an attempt');
      assert.deepEqual(received(fastMx), ['c@fast.test']);
      assert.deepEqual(received(mx), ['a@slow.test']);
      assert.deepEqual(await events(t, both), ['c@fast.test:sent', 'c@fast.test:delivered']);
      const recipients = await t.ctx.db.selectFrom('email_recipients').select(['address', 'status']).where('email_id', '=', both).orderBy('address').execute();
      assert.deepEqual(recipients, [{ address: 'b@slow.test', status: 'queued' }, { address: 'c@fast.test', status: 'delivered' }]);

      const other = await send(t, 'd@fast.test');
      await eventually(() => fastMx.messages.length === 2);
      const third = await send(t, 'e@slow.test');
      await waiting(t, third);

      // The budget refills as the clock moves: the held mail goes, one slot at a time.
      for (let i = 0; i < 5 && mx.messages.length < 3; i++) {
        t.advance(1000);
        await settled(t);
      }
      assert.deepEqual(received(mx), ['a@slow.test', 'b@slow.test', 'e@slow.test']);
      assert.deepEqual(await events(t, both), ['c@fast.test:sent', 'c@fast.test:delivered', 'b@slow.test:sent', 'b@slow.test:delivered']);
      for (const id of [first, other, third]) assert.ok(!(await events(t, id)).some((e) => e.endsWith(':delivery_delayed')));
    });

    it('slows a destination that answers 421 (its mail retried and delivered) without delaying the others', async () => {
      // Until its retry: nodemailer's pool sends a message again on a new connection when one closes under it.
      let busy = true;
      mx.onRecipient = (address) => (address === 'x@busy.test' && busy ? { code: 421, message: '4.7.0 Too many connections, slow down' } : undefined);
      const refused = await send(t, 'x@busy.test');
      await eventually(async () => (await events(t, refused)).includes('x@busy.test:delivery_delayed'));
      busy = false;

      const fast = await send(t, 'y@fast.test');
      await eventually(async () => (await events(t, fast)).includes('y@fast.test:delivered'));

      // busy.test's 2/s (a burst of 2, one spent) is halved and its burst dropped: both wait.
      const held = [await send(t, 'p@busy.test'), await send(t, 'q@busy.test')];
      for (const id of held) assert.equal((await waiting(t, id)).attempts, 0);
      assert.deepEqual(received(mx), []);

      // Past the retry's backoff three are due; at the halved rate one goes now, the others later.
      t.advance(3000);
      await settled(t);
      assert.equal(mx.messages.length, 1);
      for (let i = 0; i < 5 && mx.messages.length < 3; i++) {
        t.advance(1000);
        await settled(t);
      }
      assert.deepEqual(received(mx), ['p@busy.test', 'q@busy.test', 'x@busy.test']);
      assert.deepEqual(await events(t, refused), ['x@busy.test:delivery_delayed', 'x@busy.test:sent', 'x@busy.test:delivered']);
      for (const id of held) assert.deepEqual((await events(t, id)).map((e) => e.split(':')[1]), ['sent', 'delivered']);
    });
  });
}

for (const dialect of dialects) {
  describe(`throttling through a relay, by recipient domain (${dialect})`, () => {
    it('holds back a domain over its rate while the others go', async () => {
      const relay = await startSmtpServer();
      const t = await startApp(dialect, { env: { SMTP_URL: relay.url, DELIVERY_THROTTLE: 'slow.test=1/s' } });
      try {
        await send(t, 'a@slow.test');
        await eventually(() => relay.messages.length === 1);
        const held = await send(t, 'b@slow.test');
        assert.equal((await waiting(t, held)).attempts, 0);
        await send(t, 'c@sub.slow.test'); // the rule's subdomains share its budget
        await send(t, 'd@fast.test');
        await eventually(() => relay.messages.length === 2);
        await settled(t);
        assert.deepEqual(received(relay), ['a@slow.test', 'd@fast.test']);
        for (let i = 0; i < 5 && relay.messages.length < 4; i++) {
          t.advance(1000);
          await settled(t);
        }
        assert.deepEqual(received(relay), ['a@slow.test', 'b@slow.test', 'c@sub.slow.test', 'd@fast.test']);
        assert.deepEqual(await events(t, held), ['b@slow.test:sent', 'b@slow.test:delivered']);
      } finally {
        await t.close();
        await relay.close();
      }
    });
  });
}

for (const dialect of dialects) {
  describe(`a sending domain's daily limit (${dialect})`, () => {
    it('sends up to the limit a UTC day; the rest waits for the next day, attempts unchanged, recorded as scheduled', async () => {
      const relay = await startSmtpServer();
      const t = await startApp(dialect, { env: { SMTP_URL: relay.url } });
      try {
        const { data: domain } = await t.resend.domains.create({ name: 'warm.test' });
        const path = `/domains/${domain!.id}`;
        assert.equal((await requestJson(t, 'PATCH', path, { daily_limit: 0 })).status, 422);
        assert.equal((await requestJson(t, 'PATCH', path, { daily_limit: 2 })).status, 200);
        assert.equal((await requestJson(t, 'GET', path)).body.daily_limit, 2);

        const sendFrom = async (to: string[]) => (await t.resend.emails.send({ from: 'news@warm.test', to, subject: 's', text: 't' })).data!.id;
        await sendFrom(['a@one.test']);
        await eventually(() => relay.messages.length === 1);
        const split = await sendFrom(['b@one.test', 'c@one.test']);
        const job = await waiting(t, split);
        assert.equal(job.attempts, 0);
        const later = await sendFrom(['d@one.test']);
        await waiting(t, later);
        const other = (await t.resend.emails.send({ from: 'x@other.test', to: 'e@one.test', subject: 's', text: 't' })).data!.id;
        await eventually(async () => (await events(t, other)).includes('e@one.test:delivered'));
        assert.deepEqual(received(relay), ['a@one.test', 'b@one.test', 'e@one.test']);
        assert.deepEqual(await events(t, split), ['c@one.test:scheduled', 'b@one.test:sent', 'b@one.test:delivered']);
        assert.deepEqual(await events(t, later), ['d@one.test:scheduled']);

        const now = new Date(t.clock.now());
        t.advance(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - t.clock.now());
        await eventually(() => relay.messages.length === 5);
        await settled(t);
        assert.deepEqual(received(relay), ['a@one.test', 'b@one.test', 'c@one.test', 'd@one.test', 'e@one.test']);
        assert.deepEqual(await events(t, later), ['d@one.test:scheduled', 'd@one.test:sent', 'd@one.test:delivered']);
      } finally {
        await t.close();
        await relay.close();
      }
    });
  });
}

describe('push-back', () => {
  it('is a 421, or a 4xx whose status or words ask to slow down; not a 5xx, nor one mailbox receiving too fast', () => {
    const yes = [
      [421, '421 4.7.0 Try again later, closing connection'],
      [421, '421-4.7.28 Our system has detected an unusual rate of unsolicited mail'],
      [451, '451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (S77719)'],
      [450, '450 4.7.650 The mail server has been temporarily rate limited due to IP reputation'],
      [452, '452 Too many connections from your IP'],
    ] as const;
    const no = [
      [451, '451 4.7.1 Greylisted, please try again later'],
      [450, '450-4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages'],
      [550, '550 5.7.28 Rate limited: too many messages'],
      [undefined, 'Connection closed'],
    ] as const;
    for (const [code, response] of yes) assert.equal(pushesBack({ code, response }), true, response);
    for (const [code, response] of no) assert.equal(pushesBack({ code, response }), false, response);
  });
});

describe('DELIVERY_THROTTLE', () => {
  const read = (env: Record<string, string>) => readConfig({ DATABASE_URL: ':memory:', ...env });

  it('reads rates per second, minute or hour; direct mode adds its default for every other destination', () => {
    assert.deepEqual(read({ DELIVERY_MODE: 'direct', DELIVERY_THROTTLE: 'mx.example.com=20/s, mail.example.net=600/m' }).throttle, [
      { name: 'mx.example.com', perSecond: 20 },
      { name: 'mail.example.net', perSecond: 10 },
      ...PROVIDER_THROTTLES,
      { name: '*', perSecond: 10 },
    ]);
    assert.deepEqual(read({ DELIVERY_MODE: 'direct', DELIVERY_THROTTLE: '*=3600/h' }).throttle, [...PROVIDER_THROTTLES, { name: '*', perSecond: 1 }]);
    assert.deepEqual(read({ SMTP_URL: 'smtp://relay.test:587' }).throttle, [], 'no limit by default through a relay');
    assert.deepEqual(read({ SMTP_URL: 'smtp://relay.test:587', DELIVERY_THROTTLE: 'gmail.com=1/s' }).throttle, [{ name: 'gmail.com', perSecond: 1 }], 'no provider defaults through a relay');
  });

  it('gives Google, Microsoft and Yahoo their own defaults in direct mode, each replaced by a rule of the same name', () => {
    const rules = read({ DELIVERY_MODE: 'direct' }).throttle;
    assert.deepEqual(rules, [
      { name: 'google.com', perSecond: 20 },
      { name: 'googlemail.com', perSecond: 20 },
      { name: 'outlook.com', perSecond: 10 },
      { name: 'yahoodns.net', perSecond: 5 },
      { name: '*', perSecond: 10 },
    ]);
    assert.deepEqual(read({ DELIVERY_MODE: 'direct', DELIVERY_THROTTLE: 'Yahoodns.net=60/m,Outlook.com.=2/s' }).throttle, [
      { name: 'yahoodns.net', perSecond: 1 },
      { name: 'outlook.com', perSecond: 2 },
      { name: 'google.com', perSecond: 20 },
      { name: 'googlemail.com', perSecond: 20 },
      { name: '*', perSecond: 10 },
    ]);
  });

  it('refuses a malformed rule with one line naming the variable', () => {
    for (const [value, message] of [
      ['gmail.com=20', /^Invalid DELIVERY_THROTTLE: expected comma-separated destination=rate .*, got "gmail\.com=20"$/],
      ['gmail.com=0/s', /got "gmail\.com=0\/s"/],
      ['gmail.com=20/d', /got "gmail\.com=20\/d"/],
      ['gm@il.com=20/s', /got "gm@il\.com=20\/s"/],
      ['a.test=1/s,,b.test=1/s', /got ""/],
      ['a.test=1/s,A.test=2/s', /^Invalid DELIVERY_THROTTLE: a\.test is named twice$/],
    ] as const) {
      assert.throws(() => read({ DELIVERY_MODE: 'direct', DELIVERY_THROTTLE: value }), (error: Error) => error instanceof ConfigError && message.test(error.message), value);
    }
  });
});
