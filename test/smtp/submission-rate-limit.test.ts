import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { dialects, requestJson, rowCount, startApp, type TestApp } from '../support/harness.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';

// SMTP submission counts each message against its API key's rate limit, in the budget the HTTP API
// counts in: a real SMTP client (nodemailer, one pooled connection) and the official SDK share it.

const message = { from: 'ada@example.com', to: 'bob@example.org', subject: 'Hi', text: 'hi' };

/** A key with its own `rate_limit` (or none), made over the HTTP API. */
async function newKey(t: TestApp, rateLimit?: number): Promise<{ token: string; client: Resend }> {
  const created = await requestJson(t, 'POST', '/api-keys', { name: 'smtp', ...(rateLimit === undefined ? {} : { rate_limit: rateLimit }) });
  assert.equal(created.status, 201);
  return { token: created.body.token, client: new Resend(created.body.token, { baseUrl: t.url }) };
}

/** A nodemailer client that sends each message over one connection, kept open between them. */
function pooledClient(port: number, password: string) {
  return nodemailer.createTransport({ pool: true, maxConnections: 1, host: '127.0.0.1', port, tls: { rejectUnauthorized: false }, auth: { user: 'resend', pass: password } });
}

/** Submission connections accepted so far. */
async function sessions(t: TestApp): Promise<number> {
  return (await t.ctx.instruments.smtpSessions.get()).values.find((v) => v.labels.server === 'submission')?.value ?? 0;
}

/** Moves the app's clock into the next one-second window. */
function nextWindow(t: TestApp): void {
  t.advance(1000 - (t.clock.now() % 1000));
}

/** A send's reply: its code and text, refused or not. */
async function reply(send: Promise<{ response: string }>): Promise<{ code: number; response: string }> {
  try {
    const { response } = await send;
    return { code: Number(response.slice(0, 3)), response };
  } catch (error) {
    const { responseCode, response } = error as { responseCode: number; response: string };
    return { code: responseCode, response };
  }
}

for (const dialect of dialects) {
  describe(`SMTP submission under the API key's rate limit (${dialect})`, () => {
    let t: TestApp;
    let submission: Awaited<ReturnType<typeof startSubmission>>;

    before(async () => {
      t = await startApp(dialect, { worker: false });
      submission = await startSubmission(t);
    });
    after(async () => {
      await submission.close();
      await t.close();
    });

    it('refuses a message past the limit with 450 at MAIL FROM, stores nothing of it, and takes the next window\'s', async () => {
      const key = await newKey(t, 1);
      const client = pooledClient(submission.port, key.token);
      try {
        nextWindow(t);
        const [emails, connections] = [await rowCount(t, 'emails'), await sessions(t)];
        const replies = [];
        for (let i = 0; i < 3; i++) replies.push(await reply(client.sendMail(message)));
        assert.ok(idOf(replies[0]!.response), replies[0]!.response);
        for (const refused of replies.slice(1)) {
          assert.deepEqual(refused, { code: 450, response: '450 4.7.1 Rate limit exceeded for this API key: 1 message per second; try again in 1 second' });
        }
        assert.equal(await rowCount(t, 'emails'), emails + 1, 'a refused message is not stored');

        nextWindow(t);
        const again = await reply(client.sendMail(message));
        assert.equal(again.code, 250);
        const { data } = await t.resend.emails.get(idOf(again.response)!);
        assert.equal(data?.subject, 'Hi');
        assert.equal(await sessions(t), connections + 1, 'all in one connection: a refusal leaves it usable');
      } finally {
        client.close();
      }
    });

    it('counts SMTP messages and HTTP requests of a key in one budget', async () => {
      const key = await newKey(t, 2);
      const client = submissionClient(submission.port, key.token);
      try {
        nextWindow(t);
        assert.equal((await key.client.domains.list()).error, null);
        assert.equal((await reply(client.sendMail(message))).code, 250);
        assert.equal((await reply(client.sendMail(message))).code, 450);
        assert.equal((await key.client.domains.list()).error?.name, 'rate_limit_exceeded');
        nextWindow(t);
        assert.equal((await reply(client.sendMail(message))).code, 250);
        assert.equal((await key.client.domains.list()).error, null);
        assert.equal((await key.client.domains.list()).error?.name, 'rate_limit_exceeded');
      } finally {
        client.close();
      }
    });

    it('never refuses a key without a limit', async () => {
      const key = await newKey(t);
      const client = pooledClient(submission.port, key.token);
      try {
        nextWindow(t);
        for (let i = 0; i < 12; i++) assert.equal((await reply(client.sendMail(message))).code, 250);
      } finally {
        client.close();
      }
    });
  });
}
