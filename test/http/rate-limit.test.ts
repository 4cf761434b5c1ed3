import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { readConfig } from '../../src/config.ts';
import { createTestDatabase, dialects, requestJson, startApp, type TestApp } from '../support/harness.ts';

const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after'];
const email = { from: 'Acme <orders@example.com>', to: 'customer@example.com', subject: 'Hi', text: 'hi' };

/** The rate headers of an answer, by name, only those present. */
function rateHeaders(headers: Headers | Record<string, string> | null): Record<string, string> {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers?.[name]) ?? undefined;
  return Object.fromEntries(RATE_HEADERS.flatMap((name) => (get(name) === undefined ? [] : [[name, get(name)!]])));
}

/** A key of its own (the extension's `rate_limit` on POST /api-keys), and a client for it. */
async function newKey(t: TestApp, rateLimit?: number | null): Promise<{ id: string; client: Resend; token: string }> {
  const created = await requestJson(t, 'POST', '/api-keys', { name: 'limited', ...(rateLimit === undefined ? {} : { rate_limit: rateLimit }) });
  assert.equal(created.status, 201);
  return { id: created.body.id, token: created.body.token, client: new Resend(created.body.token, { baseUrl: t.url }) };
}

/** Moves the app's clock into the next one-second window. */
function nextWindow(t: TestApp): void {
  t.advance(1000 - (t.clock.now() % 1000));
}

it('refuses a MAILROOM_RATE_LIMIT that is not a whole number from 1, naming the variable', () => {
  assert.throws(() => readConfig({ MAILROOM_RATE_LIMIT: '0' }), /^Error: Invalid MAILROOM_RATE_LIMIT: expected a whole number from 1 to 1000000, got "0"$/);
  assert.throws(() => readConfig({ MAILROOM_RATE_LIMIT: '2.5' }), /Invalid MAILROOM_RATE_LIMIT/);
  assert.equal(readConfig({ MAILROOM_RATE_LIMIT: '20' }).http.rateLimit, 20);
  assert.equal(readConfig({}).http.rateLimit, undefined);
});

for (const dialect of dialects) {
  describe(`rate limits per API key, unset (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('sends no rate headers and limits nothing without MAILROOM_RATE_LIMIT; /usage says null', async () => {
      for (let i = 0; i < 30; i++) {
        const { error, headers } = await t.resend.emails.send(email);
        assert.equal(error, null);
        assert.deepEqual(rateHeaders(headers), {});
      }
      const { data } = await t.resend.usage.get();
      assert.deepEqual(data!.rate_limit, { limit: null, duration: '1000ms' });
    });

    it("limits a key that sets its own rate_limit, even without MAILROOM_RATE_LIMIT", async () => {
      const key = await newKey(t, 2);
      assert.equal(rateHeaders((await key.client.emails.send(email)).headers)['ratelimit-limit'], '2');
      assert.equal((await key.client.emails.send(email)).error, null);
      assert.equal((await key.client.emails.send(email)).error?.name, 'rate_limit_exceeded');
      // The default key is still unlimited.
      assert.equal((await t.resend.emails.send(email)).error, null);
    });
  });

  describe(`rate limits per API key, MAILROOM_RATE_LIMIT=5 (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_RATE_LIMIT: '5' } });
    });
    after(() => t.close());

    it('counts down ratelimit-remaining through the SDK, then answers 429 rate_limit_exceeded with retry-after', async () => {
      nextWindow(t);
      const seen = [];
      for (let i = 0; i < 5; i++) {
        const { error, headers } = await t.resend.emails.send(email);
        assert.equal(error, null);
        seen.push(rateHeaders(headers));
      }
      assert.deepEqual(
        seen,
        [4, 3, 2, 1, 0].map((remaining) => ({ 'ratelimit-limit': '5', 'ratelimit-remaining': String(remaining), 'ratelimit-reset': '1', 'ratelimit-policy': '5;w=1' })),
      );
      const refused = await t.resend.emails.send(email);
      assert.equal(refused.data, null);
      assert.equal(refused.error?.name, 'rate_limit_exceeded');
      assert.equal(refused.error?.statusCode, 429);
      assert.deepEqual(rateHeaders(refused.headers), { 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'ratelimit-reset': '1', 'ratelimit-policy': '5;w=1', 'retry-after': '1' });
    });

    it("answers Resend's error body over raw HTTP, and counts every route of the key, errors included", async () => {
      nextWindow(t);
      const invalid = await t.fetch('/emails', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ to: 'a@example.com' }) });
      assert.equal(invalid.status, 422);
      assert.deepEqual(rateHeaders(invalid.headers), { 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '1', 'ratelimit-policy': '5;w=1' });
      for (let i = 0; i < 4; i++) assert.equal((await t.fetch('/domains')).status, 200);
      const refused = await t.fetch('/api-keys');
      assert.equal(refused.status, 429);
      assert.match(refused.headers.get('content-type')!, /^application\/json/);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal(refused.headers.get('ratelimit-policy'), '5;w=1');
      assert.deepEqual(await refused.json(), {
        statusCode: 429,
        name: 'rate_limit_exceeded',
        message: 'Too many requests. Please limit the number of requests per second (5 for this API key) and retry after 1 second.',
      });
    });

    it('starts each key over in the next window', async () => {
      nextWindow(t);
      for (let i = 0; i < 5; i++) assert.equal((await t.fetch('/domains')).status, 200);
      assert.equal((await t.fetch('/domains')).status, 429);
      nextWindow(t);
      const again = await t.resend.domains.list();
      assert.equal(again.error, null);
      assert.equal(rateHeaders(again.headers)['ratelimit-remaining'], '4');
    });

    it('gives each key its own budget', async () => {
      nextWindow(t);
      const other = await newKey(t);
      nextWindow(t);
      for (let i = 0; i < 5; i++) assert.equal((await t.fetch('/domains')).status, 200);
      assert.equal((await t.fetch('/domains')).status, 429);
      const { error, headers } = await other.client.emails.send(email);
      assert.equal(error, null);
      assert.equal(rateHeaders(headers)['ratelimit-remaining'], '4');
    });

    it('limits no public route and no request without a valid key', async () => {
      nextWindow(t);
      for (let i = 0; i < 6; i++) assert.equal((await t.fetch('/domains')).status, i < 5 ? 200 : 429);
      for (const path of ['/health', '/openapi.json', '/dashboard/sign-in', '/dashboard/emails', '/unsubscribe/not-a-token']) {
        const response = await fetch(`${t.url}${path}`);
        assert.notEqual(response.status, 429, path);
        assert.deepEqual(rateHeaders(response.headers), {}, path);
      }
      const missing = await fetch(`${t.url}/emails`);
      assert.equal(missing.status, 401);
      assert.deepEqual(rateHeaders(missing.headers), {});
      const unknown = await fetch(`${t.url}/emails`, { headers: { authorization: `Bearer re_${'x'.repeat(40)}` } });
      assert.equal(unknown.status, 403);
      assert.deepEqual(rateHeaders(unknown.headers), {});
    });

    it("takes a key's own rate_limit on POST and PATCH /api-keys, null meaning the default; /usage reports the calling key's", async () => {
      nextWindow(t);
      const key = await newKey(t, 2);
      nextWindow(t);
      const usage = await key.client.usage.get();
      assert.deepEqual(usage.data!.rate_limit, { limit: 2, duration: '1000ms' });
      assert.deepEqual(rateHeaders(usage.headers), { 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-reset': '1', 'ratelimit-policy': '2;w=1' });
      assert.equal((await key.client.domains.list()).error, null);
      assert.equal((await key.client.domains.list()).error?.name, 'rate_limit_exceeded');
      assert.equal((await t.resend.usage.get()).data!.rate_limit.limit, 5);

      const raised = await requestJson(t, 'PATCH', `/api-keys/${key.id}`, { rate_limit: 50 });
      assert.deepEqual(raised.body, { object: 'api_key', id: key.id });
      // A new rate applies at once in the process that set it, in the next window.
      nextWindow(t);
      assert.equal(rateHeaders((await key.client.domains.list()).headers)['ratelimit-policy'], '50;w=1');
      await requestJson(t, 'PATCH', `/api-keys/${key.id}`, { rate_limit: null });
      nextWindow(t);
      assert.equal(rateHeaders((await key.client.domains.list()).headers)['ratelimit-limit'], '5');
      // The name stays as it was; the SDK's rename still works.
      const listed = await t.resend.apiKeys.list();
      assert.equal(listed.data!.data.find((k) => k.id === key.id)!.name, 'limited');
      assert.equal((await t.resend.apiKeys.update(key.id, { name: 'renamed' })).error, null);
    });

    it('refuses a rate_limit that is not a whole number from 1, naming the field', async () => {
      nextWindow(t);
      const zero = await requestJson(t, 'POST', '/api-keys', { name: 'zero', rate_limit: 0 });
      assert.equal(zero.status, 422);
      assert.deepEqual(zero.body, {
        statusCode: 422,
        name: 'validation_error',
        message: 'Invalid `rate_limit` field: expected a whole number of requests per second from 1 to 1000000, or null for the default.',
      });
      nextWindow(t);
      const text = await requestJson(t, 'POST', '/api-keys', { name: 'text', rate_limit: 'fast' });
      assert.equal(text.status, 422);
      assert.match(text.body.message, /^Invalid `rate_limit` field: expected a whole number of requests per second, or null/);
      const key = await newKey(t);
      nextWindow(t);
      const half = await requestJson(t, 'PATCH', `/api-keys/${key.id}`, { rate_limit: 1.5 });
      assert.equal(half.status, 422);
      assert.equal(half.body.name, 'validation_error');
      const none = await requestJson(t, 'PATCH', `/api-keys/${key.id}`, {});
      assert.deepEqual(none.body, { statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
    });
  });
}

if (dialects.includes('postgres')) {
  describe('rate limits shared by two API processes on one PostgreSQL database', () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      const database = await createTestDatabase('postgres');
      const env = { MAILROOM_RATE_LIMIT: '20', MAILROOM_API_KEY: `re_${'s'.repeat(40)}` };
      a = await startApp('postgres', { database, worker: false, env });
      b = await startApp('postgres', { database, worker: false, env });
    });
    after(async () => {
      await a.close();
      await b.close();
      await a.database.drop();
    });

    it('never gives a key more than its limit in a window, however its requests are spread', async () => {
      for (let round = 0; round < 3; round++) {
        // The two processes' clocks agree, in a window neither has counted in yet.
        nextWindow(a);
        b.advance(a.clock.now() - b.clock.now());
        const statuses = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).fetch('/domains').then((response) => response.status)),
        );
        const served = statuses.filter((status) => status === 200).length;
        assert.deepEqual(new Set(statuses), new Set([200, 429]));
        // Never more than the limit; and, with more requests than the limit, all of it is used.
        assert.equal(served, 20, `round ${round}: ${served} served`);
      }
    });
  });
}
