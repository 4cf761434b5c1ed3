import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { cookiesOf, signIn } from './support/dashboard-forms.ts';
import { createTestDatabase, dialects, eventually, startApp, TEST_ENV, type TestApp } from './support/harness.ts';
import { MISSING_ID } from './support/projects.ts';

// `npm run keys`, as a user who lost the first key runs it beside a running Mailroom: a new key on the
// same database, printed once, that the running server takes at once. `--admin` makes an admin key
// (docs/projects.md), `--project` a key of another project, and `delete` ends either.

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

/** `method path` with `token`, as a script calls Mailroom without the SDK: the status and the JSON answer. */
async function call(t: TestApp, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
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

    it('creates an admin key, printed once, that manages projects and the install’s figures, reads no project’s data, and is refused once deleted', async () => {
      const database = await createTestDatabase(dialect);
      const t = await startApp(dialect, { worker: false, database, env: { MAILROOM_API_KEY: CONFIGURED } });
      try {
        assert.equal((await call(t, CONFIGURED, 'GET', '/metrics')).status, 200, 'with no admin key, a full-access key reads the metrics');

        const created = await keys(['create', '--name', 'operator', '--admin'], database.url);
        assert.equal(created.status, 0, created.stderr);
        const admin = created.stdout.trim();
        assert.match(admin, TOKEN, 'stdout holds the token alone');
        assert.match(created.stderr, /^Created an admin key named "operator".*shown only this once:\n$/);
        const listed = await keys(['list'], database.url);
        assert.equal(listed.status, 0, listed.stderr);
        const adminLine = listed.stdout.split('\n').find((line) => line.endsWith('  operator'));
        assert.match(adminLine ?? '', /^\S+  admin  /, listed.stdout);
        assert.doesNotMatch(listed.stdout, /re_/, 'never a token');
        const adminId = adminLine!.split('  ')[0]!;

        const project = await call(t, admin, 'POST', '/projects', { name: 'Client B' });
        assert.equal(project.status, 201, JSON.stringify(project.body));
        assert.equal(project.body.object, 'project');
        assert.deepEqual((await call(t, admin, 'GET', '/projects')).body.data.map((row: { name: string }) => row.name).sort(), ['Client B', 'default']);
        const emails = await call(t, admin, 'GET', '/emails');
        assert.deepEqual([emails.status, emails.body.name], [401, 'restricted_api_key'], 'an admin key reads no project’s data');
        const projectKey = await call(t, CONFIGURED, 'GET', '/projects');
        assert.deepEqual([projectKey.status, projectKey.body.name], [401, 'restricted_api_key'], 'a project’s key manages no projects');
        // Whether the install has an admin key is read again each second (domain/projects/admin-key-cache.ts).
        await eventually(async () => (await call(t, admin, 'GET', '/metrics')).status === 200);
        const metrics = await call(t, CONFIGURED, 'GET', '/metrics');
        assert.deepEqual([metrics.status, metrics.body.name], [401, 'restricted_api_key'], 'with an admin key, the metrics answer to one alone');

        const signedIn = await signIn(t, admin);
        assert.deepEqual([signedIn.status, signedIn.headers.get('location')], [303, '/dashboard/projects']);
        const cookie = cookiesOf(signedIn);
        const page = await fetch(`${t.url}/dashboard/projects`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
        assert.equal(page.status, 200);
        assert.match(await page.text(), /Client B/);

        const deleted = await keys(['delete', adminId], database.url);
        assert.equal(deleted.status, 0, deleted.stderr);
        const ended = await fetch(`${t.url}/dashboard/projects`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
        assert.equal(ended.status, 303, 'its dashboard session is over');
        assert.match(ended.headers.get('location') ?? '', /^\/dashboard\/sign-in/);
        // A running server keeps an admin key it found for a second, as it keeps API keys.
        const refused = await eventually(async () => {
          const answer = await call(t, admin, 'GET', '/projects');
          return answer.status !== 200 && answer;
        });
        assert.deepEqual([refused.status, refused.body.name], [403, 'invalid_api_key']);
        await eventually(async () => (await call(t, CONFIGURED, 'GET', '/metrics')).status === 200);
        assert.deepEqual((await call(t, CONFIGURED, 'GET', '/projects')).body.name, 'restricted_api_key', 'a project’s key still manages no projects');
        const again = await keys(['delete', adminId], database.url);
        assert.equal(again.status, 1);
        assert.match(again.stderr, /^mailroom keys: neither an admin key nor a key of the project "default" has the id/);
      } finally {
        await t.close();
        await database.drop();
      }
    });

    it('creates a key in the project --project names, refuses a project that does not exist, and deletes a project’s key', async () => {
      const database = await createTestDatabase(dialect);
      const t = await startApp(dialect, { worker: false, database, env: { MAILROOM_API_KEY: CONFIGURED } });
      try {
        const admin = (await keys(['create', '--name', 'operator', '--admin'], database.url)).stdout.trim();
        const project = await call(t, admin, 'POST', '/projects', { name: 'Client B' });
        assert.equal(project.status, 201, JSON.stringify(project.body));

        const created = await keys(['create', '--name', 'b-ops', '--project', project.body.id], database.url);
        assert.equal(created.status, 0, created.stderr);
        assert.equal(created.stderr, 'Created a full-access API key named "b-ops" in the project "Client B"; it is shown only this once:\n');
        const token = created.stdout.trim();
        const bKeys = await call(t, token, 'GET', '/api-keys');
        assert.equal(bKeys.status, 200);
        const bNames = bKeys.body.data.map((key: { name: string }) => key.name).sort();
        assert.ok(bNames.includes('b-ops') && !bNames.includes('MAILROOM_API_KEY'), bNames.join(', '));
        const aNames = (await call(t, CONFIGURED, 'GET', '/api-keys')).body.data.map((key: { name: string }) => key.name);
        assert.ok(!aNames.includes('b-ops'), 'not a key of the default project');

        const list = await keys(['list', '--project', project.body.id], database.url);
        assert.deepEqual(list.stdout.trim().split('\n').map((line) => line.split('  ').at(-1)).sort(), [...bNames, 'operator'].sort());

        for (const args of [['create', '--name', 'x', '--project', MISSING_ID], ['list', '--project', MISSING_ID], ['create', '--name', 'x', '--admin', '--project', project.body.id]]) {
          const run = await keys(args, database.url);
          assert.equal(run.status, 1, args.join(' '));
          assert.equal(run.stdout, '', args.join(' '));
          assert.match(run.stderr, args.includes('--admin') ? /^mailroom keys: an admin key is of no project/ : new RegExp(`^mailroom keys: no project has the id "${MISSING_ID}"`), args.join(' '));
        }

        const keyId = bKeys.body.data.find((key: { name: string; id: string }) => key.name === 'b-ops').id;
        const foreign = await keys(['delete', keyId], database.url);
        assert.equal(foreign.status, 1, 'a key of another project than --project names is not found');
        const deleted = await keys(['delete', keyId, '--project', project.body.id], database.url);
        assert.equal(deleted.status, 0, deleted.stderr);
        // A running server keeps a key it found for a second (domain/api-keys/api-key-cache.ts).
        await eventually(async () => (await call(t, token, 'GET', '/api-keys')).status === 403);
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
