import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { createTestDatabase, dialects, startApp, type TestApp } from '../../support/harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

for (const dialect of dialects) {
  describe(`API keys (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates a key whose token is re_ + 32 or more characters, stored only as its SHA-256', async () => {
      const { data, error } = await t.resend.apiKeys.create({ name: 'Production' });
      assert.equal(error, null);
      assert.match(data.token, /^re_[A-Za-z0-9_-]{32,}$/);
      const row = await t.ctx.db.selectFrom('api_keys').selectAll().where('id', '=', data.id).executeTakeFirstOrThrow();
      assert.equal(row.token_hash, sha256(data.token));
      assert.ok(!JSON.stringify(row).includes(data.token), 'the token itself is not stored');
      assert.equal(row.permission, 'full_access');
    });

    it('answers 201 with {id, token}', async () => {
      const response = await t.fetch('/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'raw' }),
      });
      assert.equal(response.status, 201);
      const body = (await response.json()) as any;
      assert.equal(typeof body.id, 'string');
      assert.equal(typeof body.token, 'string');
    });

    it('lists keys without tokens and keeps last_used_at without a write per request', async () => {
      const { data: created } = await t.resend.apiKeys.create({ name: 'lister' });
      const client = new Resend(created!.token, { baseUrl: t.url });
      assert.equal((await client.apiKeys.list()).error, null);
      await t.ctx.keyUsage.flush();
      const { data } = await t.resend.apiKeys.list();
      const row = data!.data.find((k) => k.id === created!.id)!;
      assert.equal(row.name, 'lister');
      // Resend's shape: what the dashboard also reads (permission, domain) stays out of the API's answer.
      assert.deepEqual(Object.keys(row).sort(), ['created_at', 'id', 'last_used_at', 'name']);
      assert.match(row.last_used_at!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);
      assert.ok(!JSON.stringify(data).includes(created!.token));
    });

    it('renames and deletes a key; a deleted key is refused with 403 invalid_api_key', async () => {
      const { data: created } = await t.resend.apiKeys.create({ name: 'old' });
      const patched = await t.fetch(`/api-keys/${created!.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'new' }),
      });
      assert.deepEqual(await patched.json(), { object: 'api_key', id: created!.id });
      const list = await t.resend.apiKeys.list();
      assert.equal(list.data!.data.find((k) => k.id === created!.id)!.name, 'new');

      // Used once, so that authentication has it in memory when it is deleted.
      const own = new Resend(created!.token, { baseUrl: t.url });
      assert.equal((await own.apiKeys.list()).error, null);
      const removed = await t.resend.apiKeys.remove(created!.id);
      assert.deepEqual(removed.data, { object: 'api_key', id: created!.id, deleted: true });
      const refused = await own.apiKeys.list();
      assert.deepEqual(refused.error, { statusCode: 403, name: 'invalid_api_key', message: 'API key is invalid.' });
      const again = await t.resend.apiKeys.remove(created!.id);
      assert.equal(again.error?.name, 'not_found');
    });

    it('answers 401 missing_api_key without a header and 403 invalid_api_key for an unknown key', async () => {
      const none = await fetch(`${t.url}/api-keys`);
      assert.equal(none.status, 401);
      assert.deepEqual(await none.json(), {
        statusCode: 401,
        name: 'missing_api_key',
        message: 'Missing API key in the authorization header.',
      });
      const unknown = await new Resend(`re_${'x'.repeat(40)}`, { baseUrl: t.url }).apiKeys.list();
      assert.equal(unknown.error?.statusCode, 403);
      assert.equal(unknown.error?.name, 'invalid_api_key');
    });

    it('restricts a sending_access key to sending: 401 restricted_api_key elsewhere', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const sender = new Resend(data!.token, { baseUrl: t.url });
      const sent = await sender.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 's', text: 't' });
      assert.equal(sent.error, null);
      for (const call of [() => sender.apiKeys.list(), () => sender.emails.get(sent.data.id), () => sender.emails.list()]) {
        const { error } = await call();
        assert.equal(error?.statusCode, 401);
        assert.equal(error?.name, 'restricted_api_key');
      }
    });

    it('refuses an unknown permission with invalid_access and a missing name with missing_required_field', async () => {
      const bad = await t.resend.apiKeys.create({ name: 'x', permission: 'admin' as never });
      assert.equal(bad.error?.name, 'invalid_access');
      assert.equal(bad.error?.statusCode, 422);
      const missing = await t.fetch('/api-keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.deepEqual(await missing.json(), { statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
    });
  });

  describe(`API key seeding (${dialect})`, () => {
    it('creates one key on a first start with none, and none on the next start', async () => {
      const first = await startApp(dialect, { worker: false });
      try {
        assert.equal((await first.resend.apiKeys.list()).data!.data.length, 1);
        const { seedApiKey } = await import('../../../src/domain/api-keys/api-keys.ts');
        assert.equal(await seedApiKey(first.ctx), undefined);
      } finally {
        await first.close();
      }
    });

    it('seeds MAILROOM_API_KEY as a full-access key', async () => {
      const token = `re_${'k'.repeat(36)}`;
      const t = await startApp(dialect, { worker: false, env: { MAILROOM_API_KEY: token } });
      try {
        assert.equal(t.token, token);
        const { data } = await t.resend.apiKeys.list();
        assert.deepEqual(data!.data.map((k) => k.name), ['MAILROOM_API_KEY']);
      } finally {
        await t.close();
      }
    });

    it('replaces the key of an earlier MAILROOM_API_KEY when the variable changes, and keeps the others', async () => {
      const database = await createTestDatabase(dialect);
      const old = `re_${'o'.repeat(36)}`;
      const rotated = `re_${'n'.repeat(36)}`;
      const first = await startApp(dialect, { worker: false, database, env: { MAILROOM_API_KEY: old } });
      const { data: other } = await first.resend.apiKeys.create({ name: 'app' });
      await first.close();
      const second = await startApp(dialect, { worker: false, database, env: { MAILROOM_API_KEY: rotated } });
      try {
        const { data } = await second.resend.apiKeys.list();
        assert.deepEqual(data!.data.map((k) => k.name).sort(), ['MAILROOM_API_KEY', 'app']);
        assert.equal((await new Resend(old, { baseUrl: second.url }).apiKeys.list()).error?.name, 'invalid_api_key');
        assert.equal((await new Resend(other!.token, { baseUrl: second.url }).apiKeys.list()).error, null);
      } finally {
        await second.close();
        await database.drop();
      }
    });
  });
}
