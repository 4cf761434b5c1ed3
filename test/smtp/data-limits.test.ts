import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { messageReader, type TurnState } from '../../src/smtp/data-reader.ts';
import { baseOptions, listen, type SmtpListener } from '../../src/smtp/smtp-listener.ts';
import { eventually, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, startInbound } from '../support/inbound.ts';
import { dialogue } from '../support/smtp-dialogue.ts';

// Reading DATA under slow clients (src/smtp/data-reader.ts): messages over 1 MB take one of two turns,
// one per client address; a client under the minimum rate or past the deadline is cut off with 421 and
// its turn handed on; a sender waiting for a turn is never timed out for it. Each client is an address
// of its own in 127.0.0.0/8; real SMTP clients (nodemailer, and a raw one that sends at its own pace).

const LINE = `${'x'.repeat(998)}\r\n`;
/** A message of 1.25 MB: past the 1 MB that takes a turn. */
const large = (subject: string) => `From: ada@sender.test\r\nTo: support@inbox.test\r\nSubject: ${subject}\r\n\r\n${LINE.repeat(1250)}`;

/** Sends a large message from `localAddress` over a connection of its own; resolves with the reply to DATA, accepted or not. */
async function sendLarge(port: number, localAddress: string, subject: string): Promise<string> {
  const client = nodemailer.createTransport({ host: '127.0.0.1', port, localAddress, ignoreTLS: true });
  try {
    return (await client.sendMail({ envelope: { from: 'ada@sender.test', to: ['support@inbox.test'] }, raw: large(subject) })).response;
  } catch (error) {
    return (error as { response?: string }).response ?? String(error);
  } finally {
    client.close();
  }
}

/**
 * A client from `localAddress` that sends 1.25 MB of DATA (so it takes a turn), then keeps sending
 * 200 bytes every 100 ms, never ending the message, until `slow()` drops it to a byte every 100 ms.
 * `reply` is the server's next reply, when it cuts the client off.
 */
async function holdTurn(port: number, localAddress: string): Promise<{ reply: Promise<string[]>; slow(): void; close(): void }> {
  const client = await dialogue(port, { localAddress });
  for (const command of ['EHLO client.test', 'MAIL FROM:<ada@sender.test>', 'RCPT TO:<support@inbox.test>']) {
    assert.match((await client.reply(command))[0]!, /^250[ -]/, command);
  }
  assert.match((await client.reply('DATA'))[0]!, /^354 /);
  const reply = client.reply();
  client.write(large('held'));
  let chunk = `${'y'.repeat(198)}\r\n`;
  const pace = setInterval(() => client.write(chunk), 100);
  void client.closed.then(() => clearInterval(pace));
  return {
    reply,
    slow: () => void (chunk = 'z'),
    close() {
      clearInterval(pace);
      client.close();
    },
  };
}

describe('DATA limits on the inbound server, SMTP_DATA_TIMEOUT_MS=3000 (sqlite)', () => {
  let t: TestApp;
  let inbound: Awaited<ReturnType<typeof startInbound>>;
  const turns = async (state: TurnState) =>
    (await t.ctx.instruments.smtpLargeMessages.get()).values.find((v) => v.labels.server === 'inbound' && v.labels.state === state)?.value ?? 0;

  before(async () => {
    t = await startApp('sqlite', { worker: false, env: { ...INBOUND_ENV, SMTP_DATA_TIMEOUT_MS: '3000' } });
    inbound = await startInbound(t);
    await receivingDomain(t, 'inbox.test');
  });
  after(async () => {
    await inbound.close();
    await t.close();
  });

  it('gives one client address one turn, cuts a sender off with 421 past the deadline, and hands its turn to the one waiting', { timeout: 30_000 }, async () => {
    const events: string[] = [];
    const holder = await holdTurn(inbound.port, '127.0.0.2');
    void holder.reply.then(() => events.push('holder cut off'));
    try {
      await eventually(async () => (await turns('held')) === 1);
      const sameClient = sendLarge(inbound.port, '127.0.0.2', 'same client').then((reply) => {
        events.push('same client answered');
        return reply;
      });
      // The second turn is free, but not for this address: its message waits.
      await eventually(async () => (await turns('waiting')) === 1);
      assert.match(await sendLarge(inbound.port, '127.0.0.3', 'other client'), /^250 2\.0\.0 OK /, 'another address takes the second turn');

      assert.deepEqual(await holder.reply, ['421 4.4.2 Took too long: a message must arrive within 3 seconds']);
      assert.match(await sameClient, /^250 2\.0\.0 OK /);
      assert.deepEqual(events, ['holder cut off', 'same client answered']);
      const subjects = (await t.ctx.db.selectFrom('received_emails').select('subject').execute()).map((r) => r.subject).sort();
      assert.deepEqual(subjects, ['other client', 'same client'], 'what was cut off is not stored');
      assert.deepEqual([await turns('held'), await turns('waiting')], [0, 0]);
    } finally {
      holder.close();
    }
  });
});

describe('reading DATA on a real smtp-server: 400 ms idle timeout, at least 1000 bytes a second over each 500 ms', () => {
  const counts: Record<TurnState, number> = { held: 0, waiting: 0 };
  let listener: SmtpListener;
  let port: number;

  before(async () => {
    const read = messageReader({ timeoutMs: 60_000, minBytesPerSecond: 1000, windowMs: 500 }, (state, by) => (counts[state] += by));
    const server: SMTPServer = new SMTPServer({
      ...baseOptions('mx.test'),
      socketTimeout: 400,
      size: 5 * 1024 * 1024,
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      onData: (stream, session, callback) =>
        void read(server, stream, session, async (data) => `2.0.0 OK ${data?.length} bytes`).then((reply) => callback(null, reply), (error) => callback(error)),
    });
    listener = await listen(server, 0, '127.0.0.1');
    port = listener.address().port;
  });
  after(() => listener.close());

  it('keeps a sender waiting for a turn connected past the idle timeout, counts none of its wait against its rate, and cuts off holders gone slow', { timeout: 30_000 }, async () => {
    const holders = [await holdTurn(port, '127.0.0.2'), await holdTurn(port, '127.0.0.3')];
    try {
      await eventually(() => counts.held === 2);
      const waiter = sendLarge(port, '127.0.0.4', 'waiter');
      await eventually(() => counts.waiting === 1);
      // Three windows, and the idle timeout thrice over, with nothing read from the waiter: none of it counts.
      await sleep(1500);
      for (const holder of holders) holder.slow();
      for (const holder of holders) assert.deepEqual(await holder.reply, ['421 4.4.2 Too slow: under 1000 bytes a second']);
      assert.match(await waiter, /^250 2\.0\.0 OK \d+ bytes$/, 'it waited, then was read whole');
      assert.deepEqual(counts, { held: 0, waiting: 0 });
    } finally {
      for (const holder of holders) holder.close();
    }
  });

  it('reads a message sent at an ordinary pace to the end', async () => {
    assert.match(await sendLarge(port, '127.0.0.5', 'ordinary'), /^250 2\.0\.0 OK \d+ bytes$/);
  });
});
