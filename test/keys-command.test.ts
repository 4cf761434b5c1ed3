import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createTestDatabase, dialects, startApp, TEST_ENV } from './support/harness.ts';

// `npm run keys`, as a user who lost the first key runs it beside a running Mailroom: a new key on the
// same database, printed once, that the running server takes at once.

const TOKEN = /^re_[A-Za-z0-9_-]{32,}$/;
const CONFIGURED = `re_${'c'.repeat(40)}`;

/**
 * `npm run keys -- <args>` as npm runs it, on `databaseUrl`. Run apart, not with spawnSync: the server
 * under test shares this process, and a blocked event loop would make it shed load (503).
 */
function keys(args: string[], databaseUrl: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, ...TEST_ENV, DATABASE_URL: databaseUrl, MAILROOM_API_KEY: '' };
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', resolve('src/keys-command.ts'), ...args], { env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      done({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

for (const dialect of dialects) {
  describe(`npm run keys (${dialect})`, () => {
    it('creates a key on the database of DATABASE_URL, printed once, that a running server takes at once', async () => {
      const database = await createTestDatabase(dialect);
      const t = await startApp(dialect, { worker: false, database, env: { MAILROOM_API_KEY: CONFIGURED } });
      try {
        const created = await keys(['create', '--name', 'ops'], database.url);
        assert.equal(created.status, 0, created.stderr);
        const token = created.stdout.trim();
        assert.match(token, TOKEN, 'stdout holds the token alone');
        assert.equal(created.stderr, 'Created a full-access API key named "ops"; it is shown only this once:\n');

        const listed = await fetch(`${t.url}/api-keys`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(listed.status, 200);
        const names = ((await listed.json()) as { data: { name: string }[] }).data.map((key) => key.name);
        assert.deepEqual(names.sort(), ['MAILROOM_API_KEY', 'ops']);

        const sending = await keys(['create', '--name', 'ci', '--permission', 'sending_access'], database.url);
        assert.equal(sending.status, 0, sending.stderr);
        const refused = await fetch(`${t.url}/api-keys`, { headers: { authorization: `Bearer ${sending.stdout.trim()}` } });
        assert.equal(refused.status, 401, 'a sending-access key reads no keys');

        const list = await keys(['list'], database.url);
        assert.equal(list.status, 0, list.stderr);
        assert.deepEqual(list.stdout.trim().split('\n').map((line) => line.split('  ').at(-1)), ['ci', 'ops', 'MAILROOM_API_KEY']);
        assert.doesNotMatch(list.stdout, /re_/, 'never a token');
      } finally {
        await t.close();
        await database.drop();
      }
    });
  });
}

describe('npm run keys, misused', () => {
  it('says how to use it when the arguments are wrong, in one line and a usage', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      for (const args of [['create'], ['delete'], ['create', '--name', 'x', '--permission', 'admin']]) {
        const run = await keys(args, database.url);
        assert.equal(run.status, 1, args.join(' '));
        assert.match(run.stderr, /^mailroom keys: /, args.join(' '));
        assert.equal(run.stdout, '', args.join(' '));
      }
      const longName = await keys(['create', '--name', 'n'.repeat(51)], database.url);
      assert.match(longName.stderr, /`name`.*at most 50 characters/);
    } finally {
      await database.drop();
    }
  });
});
