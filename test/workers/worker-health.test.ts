import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { HEALTHY_MS, listenWorkerHealth } from '../../src/monitoring/worker-health.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { dialects, eventually, startApp } from '../support/harness.ts';

for (const dialect of dialects) {
  describe(`worker health checks (${dialect})`, () => {
    it('answer 200 while the heartbeat is fresh; 503 before it starts, once it stops, and when the database refuses it', async () => {
      const t = await startApp(dialect, { worker: false });
      const runner = new Runner(t.ctx, tasks);
      const server = await listenWorkerHealth(t.ctx, runner, 0, '127.0.0.1');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const health = async () => {
        const response = await fetch(`${base}/health`);
        return { status: response.status, body: (await response.json()) as { status: string; worker: string } };
      };
      try {
        assert.equal((await health()).status, 503, 'no heartbeat yet');
        runner.start();
        const ok = await eventually(async () => {
          const answer = await health();
          return answer.status === 200 ? answer : undefined;
        });
        assert.deepEqual([ok.body.status, ok.body.worker], ['ok', runner.id]);

        await runner.stop(0);
        assert.deepEqual([(await health()).status, (await health()).body.status], [503, 'unavailable'], 'stopped');
        runner.start();
        await eventually(async () => (await health()).status === 200);

        // From now on every heartbeat fails; once the last one is older than HEALTHY_MS, the check says so.
        await sql`drop table workers`.execute(t.ctx.db);
        t.clock.advance(HEALTHY_MS);
        assert.equal((await health()).status, 503);

        const elsewhere = await fetch(`${base}/`);
        assert.deepEqual([elsewhere.status, ((await elsewhere.json()) as { name: string }).name], [404, 'not_found']);
        const posted = await fetch(`${base}/health`, { method: 'POST' });
        assert.deepEqual([posted.status, ((await posted.json()) as { name: string }).name], [405, 'method_not_allowed']);
      } finally {
        server.close();
        await runner.stop(0);
        await t.close();
      }
    });
  });
}
