import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const KEY = `re_${'w'.repeat(40)}`;
const EMAILS = 100;

for (const dialect of dialects) {
  describe(`webhooks across kill -9 (${dialect})`, () => {
    it('delivers every event after a restart, repeats under the same message id only', async (t) => {
      const receiver = await startWebhookReceiver();
      // Each answer waits, so the kill finds posts under way.
      receiver.delayMs = 300;
      const database = await createTestDatabase(dialect);
      const env = { MAILROOM_API_KEY: KEY, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
      const setup = await startApp(dialect, { database, worker: false, env });
      const webhookId = (await setup.resend.webhooks.create({ endpoint: receiver.url, events: ['email.delivered'] })).data!.id;
      const port = await freePort();
      const childEnv = { ...configEnv(setup.ctx), ...env, PORT: String(port), HOST: '127.0.0.1' };
      await setup.close();
      const url = `http://127.0.0.1:${port}`;

      let child = startMailroomProcess(childEnv);
      try {
        await eventually(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 30_000);
        const emails = Array.from({ length: EMAILS }, (_, i) => ({ from: 'a@example.com', to: `r${i}@example.com`, subject: `#${i}`, text: 'x' }));
        const response = await fetch(`${url}/emails/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(emails),
        });
        assert.equal(response.status, 200);
        const acknowledged = ((await response.json()) as { data: { id: string }[] }).data.map((e) => e.id);
        await eventually(() => receiver.received.length >= 10, 30_000);
        child.kill('SIGKILL');
        await exited(child);
        const beforeKill = receiver.received.length;

        const restartedAt = Date.now();
        child = startMailroomProcess(childEnv);
        const hooksOf = (id: string) => receiver.received.filter((hook) => hook.payload.data.email_id === id);
        // Done when Mailroom itself knows every event was answered 2xx, not merely when each arrived once.
        const statuses = async () => {
          const response = await fetch(`${url}/webhooks/${webhookId}/events?limit=100`, { headers: { authorization: `Bearer ${KEY}` } }).catch(() => undefined);
          return response?.ok ? ((await response.json()) as { data: { status: string }[] }).data.map((e) => e.status) : [];
        };
        await eventually(async () => (await statuses()).filter((status) => status === 'success').length === EMAILS, 60_000);
        assert.ok(acknowledged.every((id) => hooksOf(id).length > 0));
        const restartToLast = Date.now() - restartedAt;

        const duplicates = receiver.received.length - EMAILS;
        t.diagnostic(`${dialect}: ${beforeKill} of ${EMAILS} events received before the kill; restart to last ${restartToLast} ms; ${duplicates} repeated`);
        for (const id of acknowledged) {
          assert.equal(new Set(hooksOf(id).map((hook) => hook.headers['svix-id'])).size, 1, 'a repeat carries the same message id');
        }
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        await receiver.close();
        await database.drop();
      }
    });
  });
}
