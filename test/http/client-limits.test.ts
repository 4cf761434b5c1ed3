import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { readConfig } from '../../src/config.ts';
import { createTrackingToken, trackingKey } from '../../src/domain/tracking/tracking-tokens.ts';
import * as emails from '../../src/store/emails.ts';
import { signIn } from '../support/dashboard-forms.ts';
import { dialects, startApp, type TestApp } from '../support/harness.ts';

// Limits per client address on the HTTP listener (src/http/client-limits.ts): failed API keys and
// dashboard sign-ins, and the request rate of the public routes. Every request comes from 127.0.0.1;
// behind a trusted proxy, X-Forwarded-For names the client.

const TEN_MINUTES = 10 * 60_000;
const WRONG_KEY = `re_${'w'.repeat(40)}`;
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const email = { from: 'Acme <orders@example.com>', to: 'ann@example.org', subject: 'Hi', html: '<p>hi</p>' };

/** Moves the app's clock into the next one-second window. */
function nextWindow(t: TestApp): void {
  t.advance(1000 - (t.clock.now() % 1000));
}

it('refuses a bad MAILROOM_MAX_AUTH_FAILURES, MAILROOM_PUBLIC_RATE_LIMIT or MAILROOM_TRUST_PROXY, naming the variable', () => {
  assert.throws(() => readConfig({ MAILROOM_MAX_AUTH_FAILURES: '0' }), /^Error: Invalid MAILROOM_MAX_AUTH_FAILURES: expected a whole number from 1 to 10000, got "0"$/);
  assert.throws(() => readConfig({ MAILROOM_PUBLIC_RATE_LIMIT: '-1' }), /^Error: Invalid MAILROOM_PUBLIC_RATE_LIMIT: expected a whole number from 0 to 1000000, got "-1"$/);
  assert.throws(() => readConfig({ MAILROOM_TRUST_PROXY: '10.0.0.0/8,proxy.example' }), /^Error: Invalid MAILROOM_TRUST_PROXY: .* got "proxy\.example"$/);
  assert.throws(() => readConfig({ MAILROOM_TRUST_PROXY: '10.0.0.0/33' }), /Invalid MAILROOM_TRUST_PROXY/);
  assert.throws(() => readConfig({ MAILROOM_TRUST_PROXY: '2' }), /Invalid MAILROOM_TRUST_PROXY/);
  const defaults = readConfig({}).http;
  assert.deepEqual([defaults.maxAuthFailures, defaults.publicRateLimit, defaults.trustProxy], [20, 50, false]);
  const set = readConfig({ MAILROOM_MAX_AUTH_FAILURES: '5', MAILROOM_PUBLIC_RATE_LIMIT: '0', MAILROOM_TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).http;
  assert.deepEqual([set.maxAuthFailures, set.publicRateLimit, set.trustProxy], [5, 0, ['loopback', '10.0.0.0/8', '::1']]);
  assert.equal(readConfig({ MAILROOM_TRUST_PROXY: 'true' }).http.trustProxy, true);
});

for (const dialect of dialects) {
  describe(`failed authentication per client address (${dialect})`, () => {
    let t: TestApp;
    let wrong: Resend;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_MAX_AUTH_FAILURES: '3' } });
      wrong = new Resend(WRONG_KEY, { baseUrl: t.url });
    });
    after(() => t.close());

    it('refuses an address after N unknown keys with 429 rate_limit_exceeded, even with the right key, until 10 minutes have passed', async () => {
      t.advance(TEN_MINUTES);
      for (let i = 0; i < 3; i++) assert.equal((await wrong.domains.list()).error?.name, 'invalid_api_key');
      const refused = await t.resend.domains.list();
      assert.equal(refused.data, null);
      assert.equal(refused.error?.statusCode, 429);
      assert.equal(refused.error?.name, 'rate_limit_exceeded');
      assert.equal(refused.headers?.['retry-after'], '600');

      const raw = await t.fetch('/emails', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(email) });
      assert.equal(raw.status, 429);
      assert.equal(raw.headers.get('retry-after'), '600');
      assert.deepEqual(await raw.json(), {
        statusCode: 429,
        name: 'rate_limit_exceeded',
        message: 'Too many requests with an invalid API key from this address. Please retry after 600 seconds.',
      });
      // Public routes ask for no key: they still answer.
      assert.equal((await fetch(`${t.url}/health`)).status, 200);

      t.advance(TEN_MINUTES - 1000);
      assert.equal((await t.resend.domains.list()).error?.name, 'rate_limit_exceeded');
      assert.equal((await t.fetch('/domains')).headers.get('retry-after'), '1');
      t.advance(1000);
      assert.equal((await t.resend.domains.list()).error, null);
    });

    it('counts no missing key and no valid key, only unknown ones', async () => {
      t.advance(TEN_MINUTES);
      const restricted = await t.resend.apiKeys.create({ name: 'sending', permission: 'sending_access' });
      const sending = new Resend(restricted.data!.token, { baseUrl: t.url });
      for (let i = 0; i < 5; i++) {
        assert.equal((await fetch(`${t.url}/domains`)).status, 401, 'no key');
        assert.equal((await sending.domains.list()).error?.name, 'restricted_api_key');
      }
      for (let i = 0; i < 2; i++) assert.equal((await wrong.domains.list()).error?.name, 'invalid_api_key');
      assert.equal((await t.resend.domains.list()).error, null);
      assert.equal((await wrong.domains.list()).error?.name, 'invalid_api_key');
      assert.equal((await t.resend.domains.list()).error?.name, 'rate_limit_exceeded');
    });

    it('counts failed dashboard sign-ins with them: past the limit the sign-in page answers 429, even to the right key', async () => {
      t.advance(TEN_MINUTES);
      for (let i = 0; i < 2; i++) assert.equal((await signIn(t, WRONG_KEY)).status, 403);
      assert.equal((await wrong.domains.list()).error?.name, 'invalid_api_key');
      const refused = await signIn(t, t.token);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '600');
      const text = await refused.text();
      assert.match(text, /<p class="error" role="alert">Too many failed sign-ins from your address: try again in 10 minutes\.<\/p>/);
      assert.match(text, /<form class="sign-in"/, 'the form is still there');
      assert.equal((await t.resend.domains.list()).error?.name, 'rate_limit_exceeded');

      t.advance(TEN_MINUTES);
      assert.equal((await signIn(t, t.token)).status, 303);
    });
  });

  describe(`failed authentication behind a trusted proxy, MAILROOM_TRUST_PROXY=loopback (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_MAX_AUTH_FAILURES: '2', MAILROOM_TRUST_PROXY: 'loopback', MAILROOM_PUBLIC_RATE_LIMIT: '3' } });
    });
    after(() => t.close());

    const from = (client: string, token: string) => fetch(`${t.url}/domains`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client } });

    it('counts each client X-Forwarded-For names apart', async () => {
      t.advance(TEN_MINUTES);
      for (let i = 0; i < 2; i++) assert.equal((await from('203.0.113.7', WRONG_KEY)).status, 403);
      assert.equal((await from('203.0.113.7', t.token)).status, 429);
      assert.equal((await from('198.51.100.20', t.token)).status, 200);
      assert.equal((await t.fetch('/domains')).status, 200, 'the proxy itself');
    });

    it('counts the addresses of one IPv6 /64 as one client, and an IPv4-mapped address as its IPv4 one', async () => {
      t.advance(TEN_MINUTES);
      assert.equal((await from('2001:db8:1:2::7', WRONG_KEY)).status, 403);
      assert.equal((await from('2001:db8:1:2:ffff::8', WRONG_KEY)).status, 403);
      assert.equal((await from('2001:db8:1:2::99', t.token)).status, 429, 'another address of the /64');
      assert.equal((await from('2001:db8:1:3::7', t.token)).status, 200, 'another /64');

      assert.equal((await from('::ffff:198.51.100.30', WRONG_KEY)).status, 403);
      assert.equal((await from('198.51.100.30', WRONG_KEY)).status, 403);
      assert.equal((await from('198.51.100.30', t.token)).status, 429);
    });

    it('counts the public routes\' rate of one IPv6 /64 as one client', async () => {
      nextWindow(t);
      const unsubscribe = (client: string) => fetch(`${t.url}/unsubscribe/not-a-token`, { headers: { 'x-forwarded-for': client } }).then((r) => r.status);
      for (let i = 1; i <= 3; i++) assert.equal(await unsubscribe(`2001:db8:5:6::${i}`), 404);
      assert.equal(await unsubscribe('2001:db8:5:6::4'), 429);
      assert.equal(await unsubscribe('2001:db8:5:7::4'), 404, 'another /64');
    });
  });

  describe(`public routes per client address, MAILROOM_PUBLIC_RATE_LIMIT=3 (${dialect})`, () => {
    let t: TestApp;
    let emailId: string;
    let pixel: string;
    let click: string;
    before(async () => {
      t = await startApp(dialect, { env: { MAILROOM_PUBLIC_RATE_LIMIT: '3' } });
      const { data } = await t.resend.emails.send(email);
      emailId = data!.id;
      const key = trackingKey(t.ctx.secret);
      pixel = `${t.url}/track/open/${createTrackingToken(key, { kind: 'open', emailId, recipient: 'ann@example.org' })}`;
      click = `${t.url}/track/click/${createTrackingToken(key, { kind: 'click', emailId, recipient: 'ann@example.org', link: 'https://shop.example/p?a=1' })}`;
    });
    after(() => t.close());

    const recorded = async (type: string) => (await emails.listEvents(t.ctx.db, emailId)).filter((e) => e.type === type).length;

    it('still answers the pixel and the click past the limit, recording nothing; the next second records again', async () => {
      nextWindow(t);
      const before = await recorded('opened');
      for (let i = 0; i < 4; i++) {
        const response = await fetch(pixel);
        assert.equal(response.status, 200, `fetch ${i + 1}`);
        assert.equal(response.headers.get('content-type'), 'image/gif');
        assert.equal(Buffer.from(await response.arrayBuffer()).toString('base64'), GIF);
      }
      assert.equal(await recorded('opened'), before + 3, 'the fourth fetch is answered, not recorded');

      const followed = await fetch(click, { redirect: 'manual' });
      assert.equal(followed.status, 302);
      assert.equal(followed.headers.get('location'), 'https://shop.example/p?a=1');
      assert.equal(await recorded('clicked'), 0);
      // A token that is not ours is still 404, whatever the rate.
      assert.equal((await fetch(`${t.url}/track/open/not-a-token`)).status, 404);

      nextWindow(t);
      assert.equal((await fetch(click, { redirect: 'manual' })).status, 302);
      assert.equal(await recorded('clicked'), 1);
    });

    it('answers the other public routes past the limit with 429 rate_limit_exceeded and retry-after; /health and static files are never limited', async () => {
      nextWindow(t);
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${t.url}/unsubscribe/not-a-token`)).status, 404);
      for (const path of ['/unsubscribe/not-a-token', '/shared/not-a-token', '/dashboard/sign-in', '/track/open/not-a-token']) {
        const response = await fetch(`${t.url}${path}`);
        const text = await response.text();
        if (path.startsWith('/track/')) {
          assert.equal(response.status, 404, 'tracking answers as it would');
          continue;
        }
        assert.equal(response.status, 429, path);
        assert.equal(response.headers.get('retry-after'), '1', path);
        assert.match(response.headers.get('content-type')!, /^text\/html/, `${path}: a page, as its other errors`);
        assert.match(text, /Too many requests from this address\. Please limit the number of requests per second \(3 for each address\) and retry after 1 second\./, path);
      }
      const oneClick = await fetch(`${t.url}/unsubscribe/not-a-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      assert.equal(oneClick.status, 429);
      await oneClick.text();
      for (const path of ['/health', '/openapi.json', '/dashboard/assets/app.css', '/health']) assert.equal((await fetch(`${t.url}${path}`)).status, 200, path);

      // The API's routes are not public: an API key's requests are not counted here.
      for (let i = 0; i < 5; i++) assert.equal((await t.resend.domains.list()).error, null);
      const metrics = await (await t.fetch('/metrics')).text();
      assert.match(metrics, /mailroom_http_client_limited_total\{limit="public_rate",action="refused"\} [1-9]/);

      nextWindow(t);
      assert.equal((await fetch(`${t.url}/shared/not-a-token`)).status, 404);
    });
  });
}
