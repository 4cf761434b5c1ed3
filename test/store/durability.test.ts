import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { configEnv, createTestDatabase, dialects, freePort, startApp } from '../support/harness.ts';

const KEY = `re_${'d'.repeat(40)}`;

for (const dialect of dialects) {
  describe(`acknowledged means stored (${dialect})`, () => {
    it('every email answered 200 is on disk with its job after the API process is killed with -9', async () => {
      const database = await createTestDatabase(dialect);
      // A first app migrates the database; the API process under test then runs on it alone.
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      const env = configEnv(setup.ctx);
      await setup.close();

      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'api'], {
        env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', MAILROOM_API_KEY: KEY },
        stdio: 'ignore',
      });
      const url = `http://127.0.0.1:${port}`;
      while (!(await fetch(`${url}/health`).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 50));

      // 32 clients send as fast as they can; the process is killed while they are at it.
      const acknowledged: string[] = [];
      let killed = false;
      const client = async (c: number) => {
        for (let i = 0; !killed; i++) {
          const response = await fetch(`${url}/emails`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ from: 'a@example.com', to: `c${c}-${i}@example.com`, subject: 'Durable', text: 'x' }),
          }).catch(() => undefined);
          if (response?.status === 200) acknowledged.push(((await response.json()) as { id: string }).id);
          if (acknowledged.length >= 500 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 32 }, (_, c) => client(c)));
      await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));

      const after = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      try {
        const emails = new Set((await after.ctx.db.selectFrom('emails').select('id').execute()).map((r) => r.id));
        const jobs = new Set((await after.ctx.db.selectFrom('jobs').select('key').execute()).map((r) => r.key));
        const lost = acknowledged.filter((id) => !emails.has(id) || !jobs.has(`send-email:${id}`));
        assert.ok(acknowledged.length >= 500);
        assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged emails lost`);
      } finally {
        await after.close();
        await database.drop();
      }
    });
  });
}
