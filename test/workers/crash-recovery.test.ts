import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

const KEY = `re_${'c'.repeat(40)}`;
const EMAILS = 300;
const CLIENTS = 16;

for (const dialect of dialects) {
  describe(`recovery from kill -9 (${dialect})`, () => {
    it('delivers every acknowledged email soon after a restart, none more than twice', async (t) => {
      const sink = await startSmtpServer();
      // Each message waits in the sink before its 250, so the kill finds transactions under way.
      sink.delayMs = 200;
      const database = await createTestDatabase(dialect);
      // A first app migrates the database; the processes under test then run on it alone.
      const setup = await startApp(dialect, { database, worker: false, env: { SMTP_URL: sink.url, MAILROOM_API_KEY: KEY } });
      const port = await freePort();
      const env = { ...configEnv(setup.ctx), PORT: String(port), HOST: '127.0.0.1', MAILROOM_API_KEY: KEY };
      await setup.close();
      const url = `http://127.0.0.1:${port}`;
      const up = async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok;

      let child = startMailroomProcess(env);
      try {
        await eventually(up, 30_000);
        const acknowledged: string[] = [];
        let next = 0;
        const client = async () => {
          for (let i = next++; i < EMAILS; i = next++) {
            const response = await fetch(`${url}/emails`, {
              method: 'POST',
              headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
              body: JSON.stringify({ from: 'a@example.com', to: `r${i}@example.com`, subject: `#${i}`, text: 'x' }),
            });
            assert.equal(response.status, 200);
            acknowledged.push(((await response.json()) as { id: string }).id);
          }
        };
        await Promise.all(Array.from({ length: CLIENTS }, client));
        await eventually(() => sink.messages.length >= 40, 30_000);
        child.kill('SIGKILL');
        await exited(child);
        const deliveredBeforeKill = sink.messages.length;
        assert.ok(deliveredBeforeKill < EMAILS, 'the process died mid-delivery');

        const restartedAt = Date.now();
        child = startMailroomProcess(env);
        const expected = new Set(acknowledged.map((id) => `<${id}@example.com>`));
        const arrived = () => new Set(sink.messages.map((m) => m.parsed.messageId));
        await eventually(() => [...expected].every((id) => arrived().has(id)), 60_000);
        const restartToLast = Date.now() - restartedAt;

        const counts = new Map<string, number>();
        for (const m of sink.messages) counts.set(m.parsed.messageId!, (counts.get(m.parsed.messageId!) ?? 0) + 1);
        const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
        t.diagnostic(
          `${dialect}: ${deliveredBeforeKill} of ${EMAILS} delivered before the kill; ` +
            `restart to last delivery ${restartToLast} ms; ${duplicates} duplicates`,
        );
        assert.equal(counts.size, EMAILS, 'nothing but the acknowledged emails arrived');
        assert.ok([...counts.values()].every((n) => n <= 2), 'no message arrived more than twice');
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        await sink.close();
        await database.drop();
      }
    });
  });
}
