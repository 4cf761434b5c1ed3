import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, startApp, type TestApp } from '../support/harness.ts';

const json = { 'content-type': 'application/json' };
const email = { from: 'Acme <hello@example.com>', to: 'user@example.com', subject: 'Hi', html: '<p>Hi</p>' };

async function assertError(response: Response, status: number, name: string, message?: RegExp) {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await response.json()) as any;
  assert.deepEqual(Object.keys(body).sort(), ['message', 'name', 'statusCode']);
  assert.equal(body.statusCode, status);
  assert.equal(body.name, name);
  if (message) assert.match(body.message, message);
  return body as { message: string };
}

for (const dialect of dialects) {
  describe(`HTTP conventions and the error model (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('GET /health answers {"status":"ok"} without a key', async () => {
      const response = await fetch(`${t.url}/health`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { status: 'ok' });
    });

    it('an unknown route is 404 not_found, a known path with another method is 405 method_not_allowed', async () => {
      const unknown = /The requested endpoint does not exist/;
      await assertError(await t.fetch('/nothing-here'), 404, 'not_found', unknown);
      await assertError(await fetch(`${t.url}/nothing-here`), 404, 'not_found', unknown);
      await assertError(await t.fetch('/domains/x/nothing'), 404, 'not_found', unknown);
      const deleted = await t.fetch('/emails', { method: 'DELETE' });
      assert.equal(deleted.headers.get('allow'), 'GET, POST');
      await assertError(deleted, 405, 'method_not_allowed', /Method DELETE is not allowed on \/emails; it allows GET, POST/);
      await assertError(await t.fetch('/api-keys/0192e3a4-1111-7000-8000-000000000000', { method: 'GET' }), 405, 'method_not_allowed');
      // The same rule for every resource, whatever the path's parameters hold: a domain's id and a
      // contact's id or email alike.
      for (const path of ['/domains/x', '/contacts/x', '/domains/claim', '/templates/x', '/api-keys/abc']) {
        const response = await t.fetch(path, { method: 'PUT', headers: json, body: '{}' });
        await assertError(response, 405, 'method_not_allowed', /it allows/);
        assert.ok(response.headers.get('allow'), path);
      }
      await assertError(await t.fetch('/domains/x', { method: 'POST', headers: json, body: '{}' }), 405, 'method_not_allowed');
      await assertError(await t.fetch('/contacts/x', { method: 'POST', headers: json, body: '{}' }), 405, 'method_not_allowed');
      // A known path and method whose id is not an id: 404, naming it.
      await assertError(await t.fetch('/emails/outbox'), 404, 'not_found', /"outbox" is not an id/);
      await assertError(await t.fetch('/domains/x', { method: 'DELETE' }), 404, 'not_found', /"x" is not an id/);
    });

    it('malformed JSON is 400 validation_error without parser internals', async () => {
      const body = await assertError(
        await t.fetch('/emails', { method: 'POST', headers: json, body: '{"from": ' }),
        400,
        'validation_error',
      );
      assert.doesNotMatch(body.message, /Unexpected|position|at |SyntaxError/);
    });

    it('a body over the limit is 413 in the same shape: 1 MB on most routes, 41 MB on POST /emails', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
      await assertError(await t.fetch('/api-keys', { method: 'POST', headers: json, body: big }), 413, 'validation_error');
      const twoMb = JSON.stringify({ ...email, html: `<p>${'y'.repeat(2 * 1024 * 1024)}</p>` });
      assert.equal((await t.fetch('/emails', { method: 'POST', headers: json, body: twoMb })).status, 200);
      const over = JSON.stringify({ ...email, html: 'z'.repeat(41 * 1024 * 1024 + 10) });
      await assertError(await t.fetch('/emails', { method: 'POST', headers: json, body: over }), 413, 'validation_error');
    });

    it('a missing required field is 422 missing_required_field, in Resend words', async () => {
      const { to: _, ...noTo } = email;
      const body = await assertError(
        await t.fetch('/emails', { method: 'POST', headers: json, body: JSON.stringify(noTo) }),
        422,
        'missing_required_field',
      );
      assert.equal(body.message, 'Missing `to` field.');
      const { from: __, ...noFrom } = email;
      const sdk = await t.resend.emails.send(noFrom as never);
      assert.deepEqual(sdk.error, { statusCode: 422, name: 'missing_required_field', message: 'Missing `from` field.' });
    });

    it('an invalid field is 422 validation_error naming the field', async () => {
      const cases: [object, RegExp][] = [
        [{ ...email, to: 42 }, /`to`/],
        [{ ...email, to: ['ok@example.com', 'not an address'] }, /`to\[1\]`/],
        [{ ...email, subject: 5 }, /`subject`/],
        [{ ...email, tags: [{ name: 'has space', value: 'v' }] }, /`tags\[0\]\.name`/],
        [{ ...email, headers: { 'X-Ok': 'a\r\nBcc: evil@example.com' } }, /`headers\.X-Ok`/],
        [{ ...email, scheduled_at: 'whenever' }, /`scheduled_at`/],
      ];
      for (const [payload, field] of cases) {
        await assertError(
          await t.fetch('/emails', { method: 'POST', headers: json, body: JSON.stringify(payload) }),
          422,
          'validation_error',
          field,
        );
      }
    });

    it('accepts a POST with Content-Type: application/json and an empty body, as the SDK sends', async () => {
      const sent = await t.resend.emails.send({ ...email, scheduledAt: 'in 1 hour' });
      const response = await t.fetch(`/emails/${sent.data!.id}/cancel`, { method: 'POST', headers: json });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { object: 'email', id: sent.data!.id });
    });

    it('refuses a body that is not JSON with one 415 naming `Content-Type: application/json`; a POST needs none without a body', async () => {
      const before = (await t.resend.emails.list({ limit: 100 })).data!.data.length;
      const payload = JSON.stringify(email);
      const multipart = new FormData();
      multipart.append('to', 'user@example.com');
      const cases: [string, RequestInit, RegExp][] = [
        // What `curl -d '{...}'` sends.
        ['a form', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: payload }, /Content-Type is "application\/x-www-form-urlencoded"/],
        ['text', { headers: { 'content-type': 'text/plain' }, body: payload }, /Content-Type is "text\/plain"/],
        ['multipart', { body: multipart }, /Content-Type is "multipart\/form-data"/],
        ['no Content-Type', { body: new Blob([payload]) }, /has no Content-Type/],
        ['neither body nor Content-Type', {}, /has no Content-Type/],
      ];
      for (const [what, init, sent] of cases) {
        const response = await t.fetch('/emails', { method: 'POST', ...init });
        const body = await assertError(response, 415, 'validation_error', /^Send the request body with `Content-Type: application\/json`; /);
        assert.match(body.message, sent, what);
      }
      await assertError(await t.fetch('/api-keys', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=k' }), 415, 'validation_error');
      assert.equal((await t.resend.emails.list({ limit: 100 })).data!.data.length, before, 'nothing was sent');

      // An action route needs no body, and then no Content-Type (`curl -X POST`).
      const sent = await t.resend.emails.send({ ...email, scheduledAt: 'in 1 hour' });
      const response = await t.fetch(`/emails/${sent.data!.id}/cancel`, { method: 'POST' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { object: 'email', id: sent.data!.id });
    });

    it('ignores unknown fields', async () => {
      const response = await t.fetch('/emails', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ ...email, not_a_field: true, react: null }),
      });
      assert.equal(response.status, 200);
    });

    it('every 2xx answer is JSON', async () => {
      for (const path of ['/health', '/emails', '/api-keys', '/openapi.json']) {
        const response = await t.fetch(path);
        assert.equal(response.status, 200, path);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/, path);
        await response.json();
      }
    });

    it('serves an OpenAPI document generated from the route schemas', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as any;
      assert.match(doc.openapi, /^3\./);
      assert.ok(doc.paths['/emails'].post.requestBody);
      assert.ok(doc.paths['/api-keys'].get);
      assert.ok(doc.paths['/emails/{id}'].get.responses['200']);
    });
  });

  describe(`unexpected errors (${dialect})`, () => {
    it('answer 500 internal_server_error with a generic message and the request id, no details', async () => {
      const t = await startApp(dialect, { worker: false });
      const token = t.token;
      // Break the database under the running app: the emails table (and what refers to it) is gone.
      for (const table of ['email_events', 'sent_messages', 'email_sources', 'email_recipients', 'email_attachments', 'email_contents', 'emails']) {
        await t.ctx.db.schema.dropTable(table).execute();
      }
      const response = await fetch(`${t.url}/emails`, { headers: { authorization: `Bearer ${token}` } });
      const body = await assertError(response, 500, 'internal_server_error');
      assert.match(body.message, /^An unexpected error occurred\. Request id: [0-9a-f-]{36}\.$/);
      assert.equal(response.headers.get('x-request-id'), body.message.match(/[0-9a-f-]{36}/)![0]);
      await t.close();
    });
  });
}
