import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dialects, eventually, startApp, startWorker } from '../support/harness.ts';

// A worker that polls once a minute still delivers at once what another process accepted: on
// PostgreSQL, the API's commit is announced (NOTIFY) and the worker listens (LISTEN).
describe('jobs committed in another process (postgres)', { skip: !dialects.includes('postgres') && 'needs TEST_DATABASE_URL' }, () => {
  it('wake a worker that would not poll for a minute', async () => {
    const api = await startApp('postgres', { worker: false, env: { WORKER_POLL_MS: '60000' } });
    const worker = await startWorker(api);
    try {
      // Its first claim, at start, finds nothing; from then on only a notice can wake it within the minute.
      await eventually(() => worker.runner.heartbeatAt !== undefined);
      for (let i = 0; i < 3; i++) {
        const { data } = await api.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: `s${i}`, text: 'x' });
        const email = await eventually(async () => {
          const got = (await api.resend.emails.get(data!.id)).data;
          return got?.last_event === 'delivered' ? got : undefined;
        });
        assert.equal(email.subject, `s${i}`);
      }
    } finally {
      await worker.stop();
      await api.close();
    }
  });

  it('are heard again after the listening connection is lost', async () => {
    const api = await startApp('postgres', { worker: false, env: { WORKER_POLL_MS: '60000' } });
    const worker = await startWorker(api);
    try {
      await eventually(() => worker.runner.heartbeatAt !== undefined);
      // Ends every other session listening on this database's channel, as a failover or restart would.
      const { sql } = await import('kysely');
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen mailroom_jobs' and pid <> pg_backend_pid()`.execute(api.ctx.db);
      const { data } = await api.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'after', text: 'x' });
      await eventually(async () => (await api.resend.emails.get(data!.id)).data?.last_event === 'delivered');
    } finally {
      await worker.stop();
      await api.close();
    }
  });
});
