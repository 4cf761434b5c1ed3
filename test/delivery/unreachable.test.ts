import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// A relay or a recipient's server that cannot be reached (refusing, silent, 421 to everything, TLS that
// fails) and DNS that never answers: each a deferral, delivery_delayed, and then a pause of the whole
// server (delivery/breaker.ts) in which no message tries to connect; once it answers again, every
// email goes out, once. Real servers on both sides: a TCP front that misbehaves as told, or passes
// connections to a real smtp-server.

type Mode = 'pass' | 'reset' | 'silent' | '421';

interface Front {
  port: number;
  mode: Mode;
  /** Connections accepted so far. */
  connections: number;
  /** Behaves as `mode` from now on, dropping the connections open (a relay going down drops its clients). */
  become(mode: Mode): void;
  close(): Promise<void>;
}

async function startFront(sink: TestSmtpServer): Promise<Front> {
  const sockets = new Set<Socket>();
  const front: Front = {
    port: 0,
    mode: 'pass',
    connections: 0,
    become(mode) {
      front.mode = mode;
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {},
  };
  const server: Server = createServer((socket) => {
    front.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (front.mode === 'reset') return void socket.destroy();
    if (front.mode === '421') return void socket.end('421 4.3.2 Service not available, closing transmission channel\r\n');
    if (front.mode === 'silent') return;
    const upstream = connect(sink.port, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.port = (server.address() as { port: number }).port;
  front.close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return front;
}

const base = { from: 'Acme <hello@example.com>', subject: 'Hello', text: 'Hi' };
type Event = { type: string; response: string | null };

async function eventsOf(t: TestApp, id: string): Promise<Event[]> {
  return ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: Event[] }).data;
}

const lastEvents = async (t: TestApp, ids: string[]) => Promise.all(ids.map(async (id) => (await t.resend.emails.get(id)).data!.last_event));

/** Moves the clock a second at a time until every email is delivered; the sink has each once. */
async function allDelivered(t: TestApp, sink: TestSmtpServer, ids: string[]): Promise<void> {
  await eventually(async () => {
    t.advance(1000);
    return (await lastEvents(t, ids)).every((event) => event === 'delivered') || undefined;
  }, 30_000);
  const copies = ids.map((id) => sink.messages.filter((m) => m.parsed.messageId === `<${id}@example.com>`).length);
  assert.deepEqual(copies, ids.map(() => 1), 'each email delivered once');
}

for (const dialect of dialects) {
  describe(`a relay that cannot be reached (${dialect})`, () => {
    let sink: TestSmtpServer;
    let front: Front;
    let t: TestApp;

    before(async () => {
      sink = await startSmtpServer();
      front = await startFront(sink);
      // Timeouts of a second, so that a silent relay is given up on quickly here (30 s by default).
      t = await startApp(dialect, { env: { SMTP_URL: `smtp://127.0.0.1:${front.port}?greetingTimeout=1000&connectionTimeout=1000` } });
    });
    after(async () => {
      await t.close();
      await front.close();
      await sink.close();
    });

    for (const mode of ['reset', 'silent', '421'] as const) {
      it(`defers while it ${mode === 'reset' ? 'drops every connection' : mode === 'silent' ? 'never greets' : 'answers 421 to everything'}, then pauses it: no connection for the emails sent meanwhile, and each goes out once when it is back`, async () => {
        front.become(mode);
        const first = await Promise.all([1, 2, 3, 4].map(async (i) => (await t.resend.emails.send({ ...base, to: `first${i}@example.com` })).data!.id));
        await eventually(async () => (await lastEvents(t, first)).every((event) => event === 'delivery_delayed') || undefined, 20_000);
        const [delayed] = (await eventsOf(t, first[0]!)).filter((e) => e.type === 'delivery_delayed');
        assert.ok(delayed?.response, 'the deferral says why');

        // Paused now: the emails sent meanwhile record why they wait, and open no connection.
        const tried = front.connections;
        const meanwhile = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(async (i) => (await t.resend.emails.send({ ...base, to: `meanwhile${i}@example.com` })).data!.id));
        await eventually(async () => (await lastEvents(t, meanwhile)).every((event) => event === 'delivery_delayed') || undefined);
        const [paused] = (await eventsOf(t, meanwhile[0]!)).filter((e) => e.type === 'delivery_delayed');
        assert.match(paused!.response!, /^Delivery to the relay 127\.0\.0\.1:\d+ is paused: it could not be reached/);
        assert.equal(front.connections, tried, 'no connection while the relay is paused');

        front.become('pass');
        await allDelivered(t, sink, [...first, ...meanwhile]);
        sink.messages.length = 0;
      });
    }

    it('defers a TLS handshake that fails', async () => {
      // Implicit TLS to a server that speaks plain SMTP: the handshake fails. (A client stuck in it holds
      // its connection open: this server does not wait for it when it closes.)
      const plain = await startSmtpServer({ closeTimeout: 100 });
      const tls = await startApp(dialect, { env: { SMTP_URL: `smtps://127.0.0.1:${plain.port}?connectionTimeout=1000&greetingTimeout=1000` } });
      try {
        const { data } = await tls.resend.emails.send({ ...base, to: 'tls@example.com' });
        await eventually(async () => (await tls.resend.emails.get(data!.id)).data!.last_event === 'delivery_delayed' || undefined);
        assert.equal(plain.messages.length, 0);
      } finally {
        await tls.close();
        await plain.close();
      }
    });
  });

  describe(`direct delivery when DNS never answers, or a destination cannot be reached (${dialect})`, () => {
    let silentDns: UdpSocket;
    let dns: TestDnsServer;
    let sink: TestSmtpServer;
    let front: Front;
    let t: TestApp;

    before(async () => {
      // A DNS server that takes every query and answers none, and one that names the front as an MX.
      silentDns = createSocket('udp4');
      await new Promise<void>((resolve) => silentDns.bind(0, '127.0.0.1', resolve));
      dns = await startDnsServer();
      dns.add('down.test', { MX: [{ exchange: 'mx.down.test', priority: 10 }] });
      dns.add('mx.down.test', { A: ['127.0.0.1'] });
      sink = await startSmtpServer();
      front = await startFront(sink);
      const env = { DELIVERY_MODE: 'direct', DIRECT_SMTP_PORT: String(front.port), MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false' };
      t = await startApp(dialect, { env: { ...env, DNS_SERVERS: dns.address } });
      silent = await startApp(dialect, { env: { ...env, DNS_SERVERS: `127.0.0.1:${silentDns.address().port}` } });
    });
    let silent: TestApp;
    after(async () => {
      await Promise.all([t.close(), silent.close()]);
      await front.close();
      await Promise.all([sink.close(), dns.close()]);
      silentDns.close();
    });

    it("pauses a destination whose server drops every connection, as it pauses a relay, and delivers each email once it is back", async () => {
      const from = { ...base, from: 'Acme <hello@sender.test>' };
      front.become('reset');
      const first = await Promise.all([1, 2, 3].map(async (i) => (await t.resend.emails.send({ ...from, to: `first${i}@down.test` })).data!.id));
      await eventually(async () => (await lastEvents(t, first)).every((event) => event === 'delivery_delayed') || undefined, 20_000);
      const tried = front.connections;
      const meanwhile = await Promise.all([1, 2, 3, 4].map(async (i) => (await t.resend.emails.send({ ...from, to: `meanwhile${i}@down.test` })).data!.id));
      await eventually(async () => (await lastEvents(t, meanwhile)).every((event) => event === 'delivery_delayed') || undefined);
      assert.match((await eventsOf(t, meanwhile[0]!)).find((e) => e.type === 'delivery_delayed')!.response!, /^Delivery to mx\.down\.test is paused/);
      assert.equal(front.connections, tried, 'no connection while the destination is paused');
      front.become('pass');
      const ids = [...first, ...meanwhile];
      await eventually(async () => {
        t.advance(1000);
        return (await lastEvents(t, ids)).every((event) => event === 'delivered') || undefined;
      }, 30_000);
      assert.deepEqual(ids.map((id) => sink.messages.filter((m) => m.parsed.messageId === `<${id}@sender.test>`).length), ids.map(() => 1));
    });

    it('defers an email whose MX lookup times out, and frees the worker at the resolver’s timeout', async () => {
      const { data } = await silent.resend.emails.send({ ...base, to: 'someone@silent.test' });
      await eventually(async () => (await silent.resend.emails.get(data!.id)).data!.last_event === 'delivery_delayed' || undefined, 30_000);
      const [delayed] = (await eventsOf(silent, data!.id)).filter((e) => e.type === 'delivery_delayed');
      assert.match(delayed!.response!, /DNS lookup of the MX of silent\.test failed \(ETIMEOUT\)/);
      assert.equal((await silent.ctx.db.selectFrom('jobs').select('locked_by').where('task', '=', 'send-email').executeTakeFirstOrThrow()).locked_by, null);
    });
  });
}
