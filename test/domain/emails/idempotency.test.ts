import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { purgeIdempotencyKeys } from '../../../src/store/idempotency-keys.ts';
import { dialects, rowCount, startApp, type TestApp } from '../../support/harness.ts';

const email = (subject = 'Hello') => ({ from: 'a@example.com', to: 'b@example.com', subject, text: 'hi' });
const DAY = 24 * 3600 * 1000;

for (const dialect of dialects) {
  describe(`Idempotency-Key (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true' } });
    });
    after(() => t.close());

    it('answers the same key and payload with the first response, and stores one email', async () => {
      const before = await rowCount(t, 'emails');
      const first = await t.resend.emails.send(email(), { idempotencyKey: 'order-1' });
      const again = await t.resend.emails.send(email(), { idempotencyKey: 'order-1' });
      assert.equal(first.error, null);
      assert.deepEqual(again.data, first.data);
      assert.equal(await rowCount(t, 'emails'), before + 1);
      assert.equal(await rowCount(t, 'jobs'), before + 1);
    });

    it('compares requests by their bytes: the same payload written in another order is another request', async () => {
      const body = email('Reordered');
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const send = (payload: object) =>
        t.fetch('/emails', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'reorder' }, body: JSON.stringify(payload) });
      const first = await send(body);
      assert.equal(first.status, 200);
      assert.deepEqual(await (await send(body)).json(), await first.json());
      assert.equal((await send(reordered)).status, 409);
    });

    it('answers a body nested thousands deep with a validation error, not a stack overflow', async () => {
      const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
      for (const path of ['/emails', '/emails/batch']) {
        const response = await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'deep' }, body: `[{"from":"a@example.com","to":"b@example.com","subject":"s","text":"t","x":${deep}}]` });
        assert.equal(response.status, path === '/emails' ? 422 : 200, path);
      }
    });

    it('keeps each API key its own keys: another key reusing one neither replays nor learns of it', async () => {
      const { data: other } = await t.resend.apiKeys.create({ name: 'other' });
      const second = new Resend(other!.token, { baseUrl: t.url });
      const first = await t.resend.emails.send(email('Scoped'), { idempotencyKey: 'per-api-key' });
      const theirs = await second.emails.send(email('Scoped'), { idempotencyKey: 'per-api-key' });
      assert.equal(theirs.error, null);
      assert.notEqual(theirs.data.id, first.data!.id);
      const different = await second.emails.send(email('Other payload'), { idempotencyKey: 'per-api-key' });
      assert.equal(different.error?.name, 'invalid_idempotent_request', 'their own key, used with another payload');
    });

    it('refuses the same key with another payload: 409 invalid_idempotent_request', async () => {
      await t.resend.emails.send(email('One'), { idempotencyKey: 'changed' });
      const { error } = await t.resend.emails.send(email('Two'), { idempotencyKey: 'changed' });
      assert.equal(error?.statusCode, 409);
      assert.equal(error?.name, 'invalid_idempotent_request');
    });

    it('refuses a key shorter than 1 or longer than 256 characters: 400 invalid_idempotency_key', async () => {
      const long = await t.resend.emails.send(email(), { idempotencyKey: 'k'.repeat(257) });
      assert.deepEqual(long.error, {
        statusCode: 400,
        name: 'invalid_idempotency_key',
        message: 'Idempotency keys, if present, must have between 1 and 256 characters.',
      });
      const empty = await t.fetch('/emails', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': '' },
        body: JSON.stringify(email()),
      });
      assert.equal(empty.status, 400);
      assert.equal((await t.resend.emails.send(email('256'), { idempotencyKey: 'k'.repeat(256) })).error, null);
    });

    it('answers a second request with a key still in flight with 409 concurrent_idempotent_requests', async () => {
      // The attachment is served slowly, so the first request is still being answered when the second
      // arrives.
      const slow = createServer((_, res) => void setTimeout(() => res.end('slow file'), 300));
      await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
      const payload = { ...email('Race'), attachments: [{ path: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/f.txt` }] };
      const before = await rowCount(t, 'emails');
      const [a, b] = await Promise.all([
        t.resend.emails.send(payload, { idempotencyKey: 'race' }),
        t.resend.emails.send(payload, { idempotencyKey: 'race' }),
      ]);
      slow.close();
      const statuses = [a, b].map((r) => (r.error ? r.error.name : 'ok')).sort();
      assert.deepEqual(statuses, ['concurrent_idempotent_requests', 'ok']);
      assert.equal([a, b].find((r) => r.error)!.error!.statusCode, 409);
      assert.equal(await rowCount(t, 'emails'), before + 1);
    });

    it('scopes keys to the endpoint, and works on batches (same ids again)', async () => {
      const single = await t.resend.emails.send(email('Scope'), { idempotencyKey: 'shared-key' });
      const batch = await t.resend.batch.send([email('Scope'), email('Scope 2')], { idempotencyKey: 'shared-key' });
      assert.equal(single.error, null);
      assert.equal(batch.error, null);
      const before = await rowCount(t, 'emails');
      const again = await t.resend.batch.send([email('Scope'), email('Scope 2')], { idempotencyKey: 'shared-key' });
      assert.deepEqual(again.data, batch.data);
      assert.equal(await rowCount(t, 'emails'), before);
      const other = await t.resend.batch.send([email('Scope')], { idempotencyKey: 'shared-key' });
      assert.equal(other.error?.name, 'invalid_idempotent_request');
      const mode = await t.resend.batch.send([email('Scope'), email('Scope 2')], { idempotencyKey: 'shared-key', batchValidation: 'permissive' });
      assert.equal(mode.error?.name, 'invalid_idempotent_request', 'the validation mode is part of the request');
    });

    it('records nothing for a refused request, so the key serves a corrected retry', async () => {
      const bad = await t.resend.emails.send({ ...email(), to: 'not-an-address' }, { idempotencyKey: 'retry-me' });
      assert.equal(bad.error?.statusCode, 422);
      const good = await t.resend.emails.send(email('Fixed'), { idempotencyKey: 'retry-me' });
      assert.equal(good.error, null);
    });

    it('writes the key with the emails: both or neither', async () => {
      const keys = await rowCount(t, 'idempotency_keys');
      const emails = await rowCount(t, 'emails');
      const refused = await t.resend.batch.send([email('A'), { ...email('B'), to: 'nope' }], { idempotencyKey: 'atomic' });
      assert.equal(refused.error?.statusCode, 422);
      assert.equal(await rowCount(t, 'idempotency_keys'), keys);
      assert.equal(await rowCount(t, 'emails'), emails);
      const { data } = await t.resend.batch.send([email('A'), email('B')], { idempotencyKey: 'atomic' });
      const row = await t.ctx.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'atomic').executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.response), data);
      assert.equal(await rowCount(t, 'emails'), emails + 2);
    });

    it('forgets a key after 24 hours, and purges expired keys', async () => {
      const first = await t.resend.emails.send(email('Daily'), { idempotencyKey: 'daily' });
      t.advance(DAY - 1000);
      assert.deepEqual((await t.resend.emails.send(email('Daily'), { idempotencyKey: 'daily' })).data, first.data);
      t.advance(2000);
      const next = await t.resend.emails.send(email('Daily'), { idempotencyKey: 'daily' });
      assert.notEqual(next.data!.id, first.data!.id, 'a new email after 24 hours');
      t.advance(DAY + 1000);
      assert.ok((await purgeIdempotencyKeys(t.ctx.db, t.clock.now(), 500)) > 0);
      assert.equal(await rowCount(t, 'idempotency_keys'), 0);
    });
  });
}
