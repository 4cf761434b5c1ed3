// Nothing secret ever reaches the log, even at trace: every route is called (with a body carrying a
// marker), mail is submitted over SMTP with an API key as password, signed with a domain's DKIM key,
// and its events posted to a webhook; then the whole log is searched for each secret and each body.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { unseal } from '../src/secrets/encryption.ts';
import { signIn } from './support/dashboard-forms.ts';
import { dialects, eventually, startApp } from './support/harness.ts';
import { startSmtpServer } from './support/smtp-server.ts';
import { idOf, startSubmission, submissionClient } from './support/submission.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

const MARKER = 'Body-marker-7d1e';
const SOME_ID = '0192e3a4-1111-7000-8000-000000000000';
const plain = (url: string) => url.replace(/\([^)]*\)/g, '');

/** Every line the app writes, at every level, as text. */
function traceLog(): { log: pino.Logger; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: pino({ level: 'trace' }, stream), text: () => lines.join('') };
}

for (const dialect of dialects) {
  describe(`secrets and bodies in the log (${dialect})`, () => {
    it('appear nowhere, at LOG_LEVEL=trace', async () => {
      const sink = await startSmtpServer();
      const receiver = await startWebhookReceiver();
      const logs = traceLog();
      const t = await startApp(dialect, {
        log: logs.log,
        env: {
          SMTP_URL: sink.url,
          MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
          // It sends wrong keys on purpose, more than the per-address limit allows before the sign-in.
          MAILROOM_MAX_AUTH_FAILURES: '10000',
          // And it calls every public route three times within one second of its clock.
          MAILROOM_PUBLIC_RATE_LIMIT: '0',
          // Providers' feedback credentials: settings that must never be written either.
          FEEDBACK_POSTMARK_AUTH: 'postmark:feedback-password-in-logs',
          FEEDBACK_MAILGUN_KEY: 'key-mailgun-signing-key-in-logs',
        },
      });
      try {
        const secrets: Record<string, string> = { 'the API key': t.token };
        const sending = (await t.resend.apiKeys.create({ name: 'sending', permission: 'sending_access' })).data!.token;
        secrets['a sending key'] = sending;
        const webhook = await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent', 'email.delivered'] });
        secrets['the webhook signing secret'] = (webhook.data as { signing_secret: string }).signing_secret;
        const domain = (await t.resend.domains.create({ name: 'signed.example' })).data!;
        const row = await t.ctx.db.selectFrom('domains').select(['id', 'dkim_private_key']).where('id', '=', domain.id).executeTakeFirstOrThrow();
        const pem = unseal(t.ctx.secret, 'dkim-private-key', row.id, row.dkim_private_key);
        secrets['the DKIM private key'] = pem.split('\n')[1]!;
        secrets['the secret'] = t.ctx.secret;

        // Mail through the API and through SMTP submission, signed with the domain's key, its events posted.
        const { data } = await t.resend.emails.send({ from: 'a@signed.example', to: 'b@example.com', subject: `${MARKER} subject`, html: `<p>${MARKER} html</p>`, text: `${MARKER} text` });
        const submission = await startSubmission(t);
        try {
          const info = await submissionClient(submission.port, sending).sendMail({ from: 'a@signed.example', to: 'c@example.com', subject: `${MARKER} smtp`, text: `${MARKER} smtp body` });
          await eventually(async () => (await t.resend.emails.get(idOf(info.response)!)).data?.last_event === 'delivered');
          await submissionClient(submission.port, 're_wrong_password_0123456789')
            .sendMail({ from: 'a@signed.example', to: 'c@example.com', subject: 's', text: 'x' })
            .catch(() => undefined);
        } finally {
          await submission.close();
        }
        secrets['a wrong SMTP password'] = 're_wrong_password_0123456789';
        await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered');
        await eventually(() => receiver.received.length >= 4);
        assert.ok(sink.messages.every((m) => m.raw.toString().includes('DKIM-Signature:')), 'the mail was signed');

        // A provider's notification with the right credentials and a body that is none of its.
        const postmark = { authorization: `Basic ${Buffer.from('postmark:feedback-password-in-logs').toString('base64')}`, 'content-type': 'application/json' };
        assert.equal((await fetch(`${t.url}/feedback/postmark`, { method: 'POST', headers: postmark, body: JSON.stringify({ name: MARKER }) })).status, 422);
        secrets['the Postmark webhook password'] = 'feedback-password-in-logs';
        secrets['the Mailgun signing key'] = 'key-mailgun-signing-key-in-logs';

        // Every route, with each kind of key and a body that carries the marker.
        for (const route of t.app.routeTable) {
          const path = plain(route.url).replace(/:[A-Za-z_]+/g, SOME_ID).replace(/\*$/, 'x');
          for (const authorization of [`Bearer ${t.token}`, `Bearer ${sending}`, 'Bearer re_unknown_key_marker_99']) {
            const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
            const body = JSON.stringify({ name: MARKER, html: MARKER, text: MARKER, password: MARKER, api_key: MARKER });
            const response = await fetch(`${t.url}${path}`, {
              method: route.method,
              headers: { authorization, 'content-type': 'application/json' },
              body: hasBody ? body : undefined,
              redirect: 'manual',
            });
            await response.arrayBuffer();
          }
        }
        secrets['an unknown key'] = 're_unknown_key_marker_99';

        // Signing in to the dashboard with the key, as its form does.
        assert.equal((await signIn(t, t.token)).status, 303);

        const text = logs.text();
        assert.ok(text.includes('"level":20'), 'the log was written below info');
        for (const [what, secret] of Object.entries(secrets)) assert.ok(!text.includes(secret), `${what} is in the log`);
        assert.ok(!text.includes(MARKER), 'a body is in the log');
        assert.ok(!/authorization|Bearer /i.test(text), 'a credential header is in the log');
      } finally {
        await t.close();
        await receiver.close();
        await sink.close();
      }
    });
  });
}
