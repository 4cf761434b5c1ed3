import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { eventually, startApp, type TestApp } from '../support/harness.ts';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: any;
}

/**
 * A request as a plain client sends it (Python's, curl): headers, then the body written as it goes.
 * A server that answers and closes before reading the body makes `write` fail with EPIPE: the promise
 * then rejects with it.
 */
function open(t: TestApp, path: string, length: number): { req: ClientRequest; answer: Promise<Answer> } {
  const url = new URL(path, t.url);
  const req = request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'content-length': String(length) },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
    });
  });
  return { req, answer };
}

/** Writes `body` in pieces, waiting for the socket to take each, as a client on a real network does. */
async function writeSlowly(req: ClientRequest, body: Buffer): Promise<void> {
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    if (!req.write(body.subarray(offset, offset + 64 * 1024))) await new Promise((resolve) => req.once('drain', resolve));
  }
  req.end();
}

const email = { from: 'a@example.com', to: 'b@example.com', subject: 'Hi', text: 'hi' };
const jsonOf = (value: object) => Buffer.from(JSON.stringify(value));

describe('HTTP limits', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp('sqlite', { worker: false, env: { HTTP_MAX_LARGE_BODIES: '1', HTTP_REQUEST_TIMEOUT_MS: '1000' } });
  });
  after(() => t.close());

  it('answers a body over the route limit with a JSON 413 once it has read it, never a broken pipe', async () => {
    const body = jsonOf({ name: 'big', segment_id: '0192e3a4-1111-7000-8000-000000000000', from: 'a@example.com', subject: 's', html: 'x'.repeat(30 * 1024 * 1024) });
    const { req, answer } = open(t, '/broadcasts', body.length);
    await writeSlowly(req, body);
    const { status, body: error } = await answer;
    assert.equal(status, 413);
    assert.equal(error.name, 'validation_error');
  });

  it('takes html of ten megabytes and more on templates and broadcasts', async () => {
    const html = `<p>${'x'.repeat(12 * 1024 * 1024)}</p>`;
    const template = open(t, '/templates', jsonOf({ name: 'big', html }).length);
    await writeSlowly(template.req, jsonOf({ name: 'big', html }));
    assert.equal((await template.answer).status, 201);
  });

  it('answers a body refused before it was read (an unknown key) once it has read it', async () => {
    const body = jsonOf({ ...email, html: 'y'.repeat(8 * 1024 * 1024) });
    const { req, answer } = open(t, '/emails', body.length);
    req.setHeader('authorization', 'Bearer re_unknownunknownunknownunknownunknown');
    await writeSlowly(req, body);
    assert.equal((await answer).status, 403);
  });

  it('serves a bounded number of large bodies at once, and answers the others 429 with retry-after', async () => {
    const large = jsonOf({ ...email, html: 'z'.repeat(3 * 1024 * 1024) });
    const held = open(t, '/emails', large.length);
    held.req.write(large.subarray(0, 1024 * 1024));
    // Once the held request has its slot, the next large one is refused; a small one is not.
    const refused = await eventually(async () => {
      const other = open(t, '/emails', large.length);
      await writeSlowly(other.req, large);
      const answer = await other.answer;
      return answer.status === 429 ? answer : undefined;
    });
    assert.equal(refused.body.name, 'rate_limit_exceeded');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal((await t.resend.emails.send(email)).error, null);
    await writeSlowly(held.req, large.subarray(1024 * 1024));
    assert.equal((await held.answer).status, 200);
    // The slot is free again once the held request's response has gone.
    await eventually(async () => {
      const next = open(t, '/emails', large.length);
      await writeSlowly(next.req, large);
      return (await next.answer).status === 200;
    });
  });

  it('closes a request whose body does not arrive within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const { req, answer } = open(t, '/emails', 1000);
    req.write('{"from":');
    const outcome = await answer.then(
      (response) => response.status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    assert.ok(outcome === 408 || outcome === 'ECONNRESET', `got ${outcome}`);
  });

  it('refuses a value past its bound without echoing it, and parses the longest allowed ones at once', async () => {
    const { data: key } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    const sender = new Resend(key!.token, { baseUrl: t.url });
    const huge = `${' '.repeat(100 * 1024)}x>`;
    const { error } = await sender.emails.send({ ...email, from: huge });
    assert.equal(error?.name, 'validation_error');
    assert.match(error.message, /`from`.*at most 998 characters/);
    assert.ok(error.message.length < 200);
    const longest = `"${'<'.repeat(900)}" <${'a'.repeat(64)}@example.com>`;
    assert.equal((await sender.emails.send({ ...email, from: longest })).error, null);
  });
});
