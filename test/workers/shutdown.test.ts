import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { readConfig } from '../../src/config.ts';
import { closeContext, createContext } from '../../src/context.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { configEnv, dialects, eventually, startApp, startWorker, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

/** Over the 1 MB that makes an email large, so that WORKER_MAX_LARGE_MESSAGES=1 keeps a second one waiting its turn. */
const LARGE = Buffer.alloc(1100 * 1024, 'x').toString('base64');

const email = (to: string, attachments: { filename: string; content: string }[] = []) => ({
  from: 'a@example.com',
  to,
  subject: to,
  text: 'hello',
  attachments,
});

/** A promise to hand back from the sink's hooks, holding its reply, and whether the hook was reached. */
function gate() {
  let open!: () => void;
  let reached!: () => void;
  const closed = new Promise<undefined>((resolve) => (open = () => resolve(undefined)));
  const hit = new Promise<void>((resolve) => (reached = resolve));
  let held = false;
  /** The first call is held until open(); later ones (another worker's retry) are answered at once. */
  const holdOnce = () => {
    if (held) return undefined;
    held = true;
    reached();
    return closed;
  };
  return { holdOnce, reached: hit, open };
}

const arrivals = (smtp: TestSmtpServer, to: string) => smtp.messages.filter((m) => m.to.includes(to)).length;

async function eventTypes(t: TestApp, emailId: string): Promise<string[]> {
  const rows = await t.ctx.db.selectFrom('email_events').select('type').where('email_id', '=', emailId).orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => row.type);
}

for (const dialect of dialects) {
  describe(`a worker stopping at its shutdown timeout (${dialect})`, () => {
    it('cuts off its sends, hands every running job back, logs one line; each email then arrives once, or twice when its DATA had ended', async () => {
      const smtp = await startSmtpServer();
      const atRecipient = gate();
      const afterData = gate();
      // One large email is held at RCPT TO (inside its SMTP transaction, the message not sent yet), the
      // other waits for its turn (WORKER_MAX_LARGE_MESSAGES=1), and a small one has sent its whole
      // message and waits for the server's 250.
      smtp.onRecipient = (address) => (address === 'held@example.com' ? atRecipient.holdOnce() : undefined);
      smtp.onMessage = (message) => (message.to.includes('late@example.com') ? afterData.holdOnce() : undefined);
      const t = await startApp(dialect, { worker: false, env: { SMTP_URL: smtp.url } });
      const lines: string[] = [];
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      const ctx = await createContext(readConfig({ ...configEnv(t.ctx), WORKER_MAX_LARGE_MESSAGES: '1' }), { clock: t.clock, log });
      const a = new Runner(ctx, tasks);
      let b: Awaited<ReturnType<typeof startWorker>> | undefined;
      let closed = false;
      try {
        const ids: string[] = [];
        for (const [to, attachments] of [
          ['held@example.com', [{ filename: 'one.bin', content: LARGE }]],
          ['held@example.com', [{ filename: 'two.bin', content: LARGE }]],
          ['late@example.com', []],
        ] as const) {
          const { data, error } = await t.resend.emails.send(email(to, [...attachments]));
          assert.equal(error, null);
          ids.push(data.id);
        }
        a.start();
        await atRecipient.reached;
        await afterData.reached;
        const held = await t.ctx.db.selectFrom('jobs').select('locked_by').execute();
        assert.deepEqual(held.map((job) => job.locked_by), [a.id, a.id, a.id], 'the three jobs run in the stopping worker');

        await a.stop(100);
        const jobs = await t.ctx.db.selectFrom('jobs').select(['locked_by', 'attempts']).execute();
        assert.deepEqual(jobs, [0, 1, 2].map(() => ({ locked_by: null, attempts: 0 })), 'handed back, their attempt not counted');
        // As main.ts does after stop(): close the context, then nothing more is said.
        await closeContext(ctx);
        closed = true;
        const loud = lines.map((line) => JSON.parse(line) as { level: number; jobs?: number; sends?: number }).filter((line) => line.level >= 40);
        assert.deepEqual(
          loud.map((line) => [line.level, line.jobs, line.sends]),
          [[40, 3, 2]],
          'one warning: three jobs handed back, two of them sends cut off; no errors',
        );

        b = await startWorker(t);
        await eventually(async () => {
          const emails = await Promise.all(ids.map(async (id) => (await t.resend.emails.get(id)).data?.last_event));
          return emails.every((last) => last === 'delivered');
        }, 30_000);
        // The server answers the transactions the stopping worker left: the one cut off at RCPT TO has
        // no message to keep, the one whose message had ended has that copy too, the one duplicate a
        // shutdown can make.
        afterData.open();
        atRecipient.open();
        await b.stop();
        b = undefined;
        await eventually(() => smtp.connections() === 0);
        await eventually(() => arrivals(smtp, 'late@example.com') === 2);
        assert.equal(arrivals(smtp, 'held@example.com'), 2, 'each large email arrived once: the one cut off at RCPT TO was discarded');
        assert.deepEqual(new Set(smtp.messages.filter((m) => m.to.includes('held@example.com')).map((m) => m.parsed.attachments[0]!.filename)), new Set(['one.bin', 'two.bin']));
        for (const id of ids) assert.deepEqual(await eventTypes(t, id), ['sent', 'delivered'], 'nothing recorded by the stopped worker');
        assert.equal(lines.filter((line) => (JSON.parse(line) as { level: number }).level >= 40).length, 1, 'nothing said after the stop');
      } finally {
        atRecipient.open();
        afterData.open();
        await b?.stop();
        if (!closed) {
          await a.stop(0);
          await closeContext(ctx);
        }
        await t.close();
        await smtp.close();
      }
    });
  });
}
