import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startMetricsFolding } from '../../src/domain/metrics/folding.ts';
import { dialects, eventually, rowCount, startApp } from '../support/harness.ts';

for (const dialect of dialects) {
  describe(`folding the metrics rollup (${dialect})`, () => {
    it("moves the increments the events' transactions appended into the rollup, every 2 s, counts unchanged", async () => {
      const t = await startApp(dialect);
      const folding = startMetricsFolding(t.ctx);
      try {
        const { data } = await t.resend.emails.send({ from: 'a@acme.test', to: ['delivered@resend.dev', 'delivered+2@resend.dev'], subject: 's', text: 't' });
        await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered');
        const totals = async () => (await t.resend.emails.metrics({ metrics: ['sent', 'delivered'] })).data!.totals;
        assert.deepEqual(await totals(), { sent: 2, delivered: 2 });
        await eventually(async () => (await rowCount(t, 'email_metric_deltas')) === 0 && (await rowCount(t, 'email_metrics')) === 2);
        assert.deepEqual(await totals(), { sent: 2, delivered: 2 });
      } finally {
        await folding.stop();
        await t.close();
      }
    });
  });
}
