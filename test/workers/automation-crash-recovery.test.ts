import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

// A process killed with SIGKILL while its automations' runs wait (on a delay, then for an event):
// after a restart every run goes on from where it was, and no step runs twice.

const KEY = `re_${'a'.repeat(40)}`;
const CONTACTS = 20;

for (const dialect of dialects) {
  describe(`automations across kill -9 (${dialect})`, () => {
    it('resumes every waiting run after a restart; each step runs once', async (t) => {
      const smtp = await startSmtpServer();
      const database = await createTestDatabase(dialect);
      const env = { MAILROOM_API_KEY: KEY, SMTP_URL: smtp.url };
      const setup = await startApp(dialect, { database, worker: false, env });
      const template = async (alias: string) =>
        (await setup.resend.templates.create({ name: alias, alias, from: 'a@acme.test', subject: alias, html: `<p>${alias} {{{NAME}}}</p>`, variables: [{ key: 'NAME', type: 'string', fallbackValue: 'you' }] }).publish()).data!.id;
      const first = await template('first');
      const second = await template('second');
      const { data, error } = await setup.resend.automations.create({
        name: 'Survives',
        status: 'enabled',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'joined' } },
          { key: 'hello', type: 'send_email', config: { template: { id: first, variables: { NAME: { var: 'event.name' } } } } },
          { key: 'pause', type: 'delay', config: { duration: '2 seconds' } },
          { key: 'confirm', type: 'wait_for_event', config: { eventName: 'confirmed', timeout: '1 hour' } },
          { key: 'thanks', type: 'send_email', config: { template: { id: second } } },
        ],
        connections: [
          { from: 'start', to: 'hello' },
          { from: 'hello', to: 'pause' },
          { from: 'pause', to: 'confirm' },
          { from: 'confirm', to: 'thanks', type: 'event_received' },
        ],
      });
      assert.equal(error, null);
      const automationId = data.id;
      const port = await freePort();
      const childEnv = { ...configEnv(setup.ctx), ...env, PORT: String(port), HOST: '127.0.0.1' };
      await setup.close();
      const url = `http://127.0.0.1:${port}`;
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: response.status, body: (await response.json()) as any };
      };
      const sendEvents = async (event: string) => {
        for (let i = 0; i < CONTACTS; i++) {
          assert.equal((await api('POST', '/events/send', { event, email: `c${i}@example.org`, payload: { name: `C${i}` } })).status, 202);
        }
      };
      const subjects = (subject: string) => smtp.messages.filter((m) => m.parsed.subject === subject);

      let child = startMailroomProcess(childEnv);
      try {
        await eventually(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 30_000);
        await sendEvents('joined');
        await eventually(() => new Set(subjects('first').map((m) => m.to[0])).size === CONTACTS, 30_000);
        // Every run now holds on its delay: a job due later, in the database only.
        child.kill('SIGKILL');
        await exited(child);
        const firstBeforeKill = subjects('first').length;
        await new Promise((resolve) => setTimeout(resolve, 2500));

        const restartedAt = Date.now();
        child = startMailroomProcess(childEnv);
        await eventually(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 30_000);
        const runs = async () => (await api('GET', `/automations/${automationId}/runs?limit=100`)).body.data as { id: string; status: string }[];
        const stepsOf = async (runId: string) => (await api('GET', `/automations/${automationId}/runs/${runId}`)).body.steps as { key: string; status: string }[];
        // The delays ended while the process was down: each run now waits for its event.
        await eventually(async () => {
          const all = await runs();
          const steps = await Promise.all(all.map((run) => stepsOf(run.id)));
          return all.length === CONTACTS && steps.every((s) => s.at(-1)?.key === 'confirm' && s.at(-1)?.status === 'waiting');
        }, 60_000);
        await sendEvents('confirmed');
        await eventually(async () => (await runs()).every((run) => run.status === 'completed'), 60_000);
        await eventually(() => new Set(subjects('second').map((m) => m.to[0])).size === CONTACTS, 60_000);
        t.diagnostic(`${dialect}: ${firstBeforeKill} first emails before the kill; restart to last ${Date.now() - restartedAt} ms`);

        for (const run of await runs()) {
          const steps = await stepsOf(run.id);
          assert.deepEqual(steps.map((s) => [s.key, s.status]), [['start', 'completed'], ['hello', 'completed'], ['pause', 'completed'], ['confirm', 'completed'], ['thanks', 'completed']], 'each step once');
        }
        assert.equal(subjects('second').length, CONTACTS, 'each second email once: it was sent after the restart');
        // A first email's send may repeat only if it was in flight at the kill, under its one Message-ID.
        for (let i = 0; i < CONTACTS; i++) {
          const copies = subjects('first').filter((m) => m.to[0] === `c${i}@example.org`);
          assert.equal(new Set(copies.map((m) => m.parsed.messageId)).size, 1);
        }
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        await smtp.close();
        await database.drop();
      }
    });
  });
}
