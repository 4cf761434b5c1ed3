import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { RETENTION_STEPS } from '../../src/domain/retention/retention.ts';
import * as emails from '../../src/store/emails.ts';
import { dialects, eventually, followLink, requestJson, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';

// POST /emails/:id/share over the SDK, and the public page its link opens, fetched as anyone would
// (the page in a browser: test/dashboard/shared-email.test.ts).

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A share link's page, fetched with no API key and no redirect followed. */
async function open(t: TestApp, url: string, path = '') {
  const response = await followLink(t, `${url}${path}`, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The token of a share URL with its payload's bytes changed by `change`, its signature kept. */
function repacked(url: string, change: (bytes: Buffer) => void): string {
  const [base, token] = [url.slice(0, url.lastIndexOf('/') + 1), url.slice(url.lastIndexOf('/') + 1)];
  const [payload, signature] = token.split('.') as [string, string];
  const bytes = Buffer.from(payload, 'base64url');
  change(bytes);
  return `${base}${bytes.toString('base64url')}.${signature}`;
}

const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;

for (const dialect of dialects) {
  describe(`POST /emails/:id/share (${dialect})`, () => {
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let sentId: string;

    before(async () => {
      t = await startApp(dialect, { env: { ...INBOUND_ENV, MAILROOM_RETENTION_DAYS: '30' } });
      inbound = await startInbound(t);
      await receivingDomain(t, 'inbox.test');
      const { data } = await t.resend.emails.send({
        from: 'Acme <hello@example.com>',
        to: 'ada@example.org',
        bcc: 'hidden@example.org',
        subject: 'Your <b>order</b>',
        html: '<p>Thanks for the order</p>',
        text: 'Thanks in text',
      });
      sentId = data!.id;
    });
    after(async () => {
      await inbound?.close();
      await t?.close();
    });

    it("answers Resend's ShareEmailResponse through the SDK; the link opens a public page of the email for 48 hours by default", async () => {
      const { data, error } = await t.resend.emails.share(sentId);
      assert.equal(error, null);
      assert.deepEqual(Object.keys(data).sort(), ['id', 'object', 'url']);
      assert.equal(data.object, 'email');
      assert.equal(data.id, sentId);
      assert.match(data.url, new RegExp(`^${t.ctx.config.publicUrl}/shared/[\\w-]{31}\\.[\\w-]{43}$`));

      const page = await open(t, data.url);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      assert.match(page.text, /Your &lt;b&gt;order&lt;\/b&gt;/);
      assert.match(page.text, /ada@example\.org/);
      assert.match(page.text, /Thanks in text/);
      assert.doesNotMatch(page.text, /hidden@example\.org/, 'Bcc is not shown');
      assert.doesNotMatch(page.text, /<nav|<a [^>]*href="\/dashboard/, 'no navigation into the dashboard');
      const frame = await open(t, data.url, '/html');
      assert.equal(frame.status, 200);
      assert.equal(frame.text, '<p>Thanks for the order</p>');

      t.advance(48 * HOUR - MINUTE);
      assert.equal((await open(t, data.url)).status, 200, 'a minute before it expires');
      t.advance(MINUTE);
      const expired = await open(t, data.url);
      assert.equal(expired.status, 404);
      assert.match(expired.text, /This link has expired/);
      assert.doesNotMatch(expired.text, /order/);
      assert.equal((await open(t, data.url, '/html')).status, 404, 'nor its html');
    });

    it('takes expires_in as a duration such as "10m", "2 hours" or "1 day"; the link dies when it has passed', async () => {
      for (const [expiresIn, lifetime] of [['10m', 10 * MINUTE], ['2 hours', 2 * HOUR], ['1 day', DAY], ['48h', 48 * HOUR], ['30s', 30_000]] as const) {
        const { data, error } = await t.resend.emails.share(sentId, { expiresIn });
        assert.equal(error, null, expiresIn);
        t.advance(lifetime - 1000);
        assert.equal((await open(t, data.url)).status, 200, `${expiresIn}: a second before`);
        t.advance(1000);
        assert.equal((await open(t, data.url)).status, 404, `${expiresIn}: once passed`);
      }
    });

    it('refuses an expires_in that is not a duration, not more than zero, or over 48 hours: 422 naming the field', async () => {
      for (const expiresIn of ['soon', '10', '', '1 month', '-1h', '0m', '0 days', '49h', '3 days', '48.5 hours', '172801s']) {
        const { data, error } = await t.resend.emails.share(sentId, { expiresIn });
        assert.equal(data, null, expiresIn);
        assert.equal(error.name, 'validation_error', expiresIn);
        assert.equal((error as { statusCode?: number }).statusCode, 422, expiresIn);
        assert.match(error.message, /^Invalid `expires_in` field: /, expiresIn);
      }
      const { status, body } = await requestJson(t, 'POST', `/emails/${sentId}/share`, { expires_in: 10 });
      assert.equal(status, 422);
      assert.match(body.message, /expires_in/);
    });

    it('takes a request with no body at all (curl -X POST), and an id in capitals', async () => {
      const response = await t.fetch(`/emails/${sentId.toUpperCase()}/share`, { method: 'POST' });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { id: string; url: string };
      assert.equal(body.id, sentId);
      assert.equal((await open(t, body.url)).status, 200);
    });

    it("answers 404 in Resend's shape for an id that is no email", async () => {
      const { data, error } = await t.resend.emails.share('0192e3a4-1111-7000-8000-000000000000');
      assert.equal(data, null);
      assert.deepEqual({ ...error }, { statusCode: 404, name: 'not_found', message: 'Email not found' });
    });

    it('is refused to a sending-access key: a link shows the content', async () => {
      const { data: key } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const sender = new Resend(key!.token, { baseUrl: t.url });
      const { data, error } = await sender.emails.share(sentId);
      assert.equal(data, null);
      assert.equal(error.name, 'restricted_api_key');
      assert.equal((error as { statusCode?: number }).statusCode, 401);
    });

    it('shares a received email: the page shows it as it arrived', async () => {
      const sent = await sendTo(inbound.port, {
        envelope: { from: 'grace@sender.test', to: ['support@inbox.test'] },
        from: 'Grace <grace@sender.test>',
        to: 'support@inbox.test',
        cc: 'copy@elsewhere.test',
        subject: 'Question about <i>invoice</i>',
        text: 'Where is it?',
        html: '<p id="q">Where is <b>it</b>?</p>',
        attachments: [{ filename: 'invoice.txt', content: 'invoice 42', contentType: 'text/plain' }],
      });
      const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;
      const { data } = await t.resend.emails.share(id, { expiresIn: '1 hour' });
      assert.equal(data!.id, id);
      const page = await open(t, data!.url);
      assert.equal(page.status, 200);
      assert.match(page.text, /Question about &lt;i&gt;invoice&lt;\/i&gt;/);
      assert.match(page.text, /grace@sender\.test/);
      assert.match(page.text, /copy@elsewhere\.test/);
      assert.match(page.text, /Where is it\?/);
      assert.match((await open(t, data!.url, '/html')).text, /<p id="q">Where is <b>it<\/b>\?<\/p>/);
      // The attachment's download link works, and dies no later than the share link.
      const download = /href="([^"]+\/downloads\/received-attachment\/[^"]+)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
      assert.equal(await (await followLink(t, download)).text(), 'invoice 42');
      assert.ok(Number(new URL(download).searchParams.get('expires')) * 1000 <= t.clock.now() + HOUR);
    });

    it('answers a small 404 page, never the email nor a redirect, to a token altered, cut short or pointed elsewhere', async () => {
      const { data } = await t.resend.emails.share(sentId, { expiresIn: '1h' });
      const url = data!.url;
      const token = url.slice(url.lastIndexOf('/') + 1);
      const dot = token.indexOf('.');
      const base = url.slice(0, url.length - token.length);
      const { data: other } = await t.resend.emails.send({ from: 'hello@example.com', to: 'bob@example.org', subject: 'Another', text: 'x' });
      const otherId = Buffer.from(other!.id.replaceAll('-', ''), 'hex');
      const altered: [string, string][] = [
        ['a character of the payload', `${base}${flip(token, 3)}`],
        ['a character of the signature', `${base}${flip(token, dot + 5)}`],
        ['the signature cut short', `${base}${token.slice(0, -1)}`],
        ['no signature', `${base}${token.slice(0, dot)}`],
        ['no dot', `${base}${token.replace('.', '')}`],
        ['more after the signature', `${base}${token}.x`],
        ['the kind: received', repacked(url, (bytes) => (bytes[0] = 2))],
        ['another email', repacked(url, (bytes) => otherId.copy(bytes, 1))],
        ['a later expiry', repacked(url, (bytes) => bytes.writeUIntBE(bytes.readUIntBE(17, 6) + DAY, 17, 6))],
        ['not a token', `${base}hello`],
      ];
      for (const [what, link] of altered) {
        for (const path of ['', '/html']) {
          const page = await open(t, link, path);
          assert.equal(page.status, 404, `${what}${path}`);
          assert.equal(page.headers.get('location'), null, what);
          assert.match(page.headers.get('content-type')!, /^text\/html/, what);
          assert.match(page.text, /Link not found/, what);
          assert.doesNotMatch(page.text, /order|Another|<iframe/, what);
          assert.equal(page.headers.get('cache-control'), 'no-store', what);
        }
      }
    });

    it('sends the page and its frame with headers that keep the link to itself: no framing, caching, indexing or Referer; no script', async () => {
      const { data } = await t.resend.emails.share(sentId, { expiresIn: '1h' });
      const page = await open(t, data!.url);
      const csp = page.headers.get('content-security-policy')!;
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /script-src/, 'no script may run');
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(page.headers.get('cache-control'), 'no-store');
      assert.equal(page.headers.get('x-robots-tag'), 'noindex, nofollow');
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      assert.doesNotMatch(page.text, /<script/);

      const frame = await open(t, data!.url, '/html');
      assert.match(frame.headers.get('content-security-policy')!, /sandbox/);
      assert.equal(frame.headers.get('referrer-policy'), 'no-referrer', 'remote images the reader shows learn nothing of the link');
      assert.equal(frame.headers.get('cache-control'), 'no-store');
    });

    it('says so when retention removed the body, as the dashboard does', async () => {
      const { data: email } = await t.resend.emails.send({ from: 'hello@example.com', to: 'old@example.org', subject: 'An old one', html: '<p>gone</p>', text: 'gone soon' });
      await eventually(async () => (await emails.findEmailStatusById(t.ctx.db, email!.id))?.last_event === 'delivered');
      // The retention step as it runs 31 days on, without moving the clock (which would expire the other tests' links).
      await eventually(async () => {
        await t.ctx.writer.transaction((tx) => RETENTION_STEPS.emails!(t.ctx, tx, t.clock.now() + 31 * DAY));
        return (await emails.findEmailStatusById(t.ctx.db, email!.id))?.body_removed_at;
      });
      const { data } = await t.resend.emails.share(email!.id);
      const page = await open(t, data!.url);
      assert.equal(page.status, 200);
      assert.match(page.text, /An old one/);
      assert.match(page.text, /removed after 30 days \(MAILROOM_RETENTION_DAYS\)/);
      assert.doesNotMatch(page.text, /gone soon|<iframe/);
    });
  });
}
