// Every route of the app's route table, read from Fastify (a new route is covered without a change
// here), called with each kind of bad or limited credential: each must be refused in Resend's shape,
// except the routes that declare themselves public or open to sending-access keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAdminKey } from '../../src/domain/projects/admin-key.ts';
import { deleteAdminKey } from '../../src/store/admin-keys.ts';
import { startApp, type TestApp } from '../support/harness.ts';

const SOME_ID = '0192e3a4-1111-7000-8000-000000000000';
const ADMIN_KEY = 're_admin_0123456789abcdefghijklmnopqrstuvwxyz';
const RESTRICTED = { status: 401, name: 'restricted_api_key' };

/** A route's path without its parameters' patterns: `/emails/:id`. */
const plain = (url: string) => url.replace(/\([^)]*\)/g, '');

interface Credential {
  name: string;
  authorization: string | undefined;
  /** The refusal every route but the public ones gives, or undefined when the access level decides. */
  refusal?: { status: number; name: string };
  /** An admin key (MAILROOM_ADMIN_KEY, or one of `npm run keys -- create --admin`): the projects' routes and no other. */
  admin?: boolean;
}

describe('authorization of every route', () => {
  let t: TestApp;
  let credentials: Credential[];
  before(async () => {
    // Every route meets two bad keys here, far past the failures one address may make, and the public
    // routes more requests in a second than one address may (test/http/client-limits.test.ts).
    t = await startApp('sqlite', { worker: false, env: { MAILROOM_MAX_AUTH_FAILURES: '10000', MAILROOM_PUBLIC_RATE_LIMIT: '0', MAILROOM_ADMIN_KEY: ADMIN_KEY } });
    const deleted = await t.resend.apiKeys.create({ name: 'deleted' });
    await t.resend.apiKeys.remove(deleted.data!.id);
    const sending = await t.resend.apiKeys.create({ name: 'sending', permission: 'sending_access' });
    const adminKey = await createAdminKey(t.ctx, 'matrix');
    const deletedAdmin = await createAdminKey(t.ctx, 'deleted');
    await deleteAdminKey(t.ctx.db, deletedAdmin.id);
    credentials = [
      { name: 'no key', authorization: undefined, refusal: { status: 401, name: 'missing_api_key' } },
      { name: 'a malformed header', authorization: 'Basic dXNlcjpwYXNz', refusal: { status: 401, name: 'missing_api_key' } },
      { name: 'an unknown key', authorization: 'Bearer re_unknown_0123456789', refusal: { status: 403, name: 'invalid_api_key' } },
      { name: 'a deleted key', authorization: `Bearer ${deleted.data!.token}`, refusal: { status: 403, name: 'invalid_api_key' } },
      { name: 'a sending-access key', authorization: `Bearer ${sending.data!.token}` },
      { name: 'the admin key', authorization: `Bearer ${ADMIN_KEY}`, admin: true },
      { name: 'an admin key of the keys command', authorization: `Bearer ${adminKey.token}`, admin: true },
      { name: 'a deleted admin key', authorization: `Bearer ${deletedAdmin.token}`, refusal: { status: 403, name: 'invalid_api_key' } },
    ];
  });
  after(() => t.close());

  it('reads a route table that holds the whole API', () => {
    const names = t.app.routeTable.map((route) => `${route.method} ${plain(route.url)}`);
    for (const expected of ['POST /emails', 'GET /domains/:id', 'POST /domains/:id/deliverability', 'DELETE /contacts/:id', 'GET /health']) {
      assert.ok(names.includes(expected), `${expected} is missing from ${names.join(', ')}`);
    }
  });

  it('refuses each bad credential, and a sending-access key outside the sending routes', async () => {
    const checked: string[] = [];
    for (const route of t.app.routeTable) {
      const path = plain(route.url).replace(/:[A-Za-z_]+/g, SOME_ID).replace(/\*$/, 'x');
      for (const credential of credentials) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (credential.authorization) headers.authorization = credential.authorization;
        const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
        const response = await fetch(`${t.url}${path}`, { method: route.method, headers, body: hasBody ? '{}' : undefined, redirect: 'manual' });
        const text = await response.text();
        const what = `${route.method} ${plain(route.url)} with ${credential.name} answered ${response.status} ${text.slice(0, 200)}`;
        // Signing in takes a key in its form, never in a header, and a form without its CSRF token is
        // refused (the form's other refusals: test/dashboard/csrf.test.ts).
        if (route.method === 'POST' && route.url === '/dashboard/sign-in') {
          assert.equal(response.status, 403, what);
          assert.match(text, /This form has expired: please sign in again\./, what);
          continue;
        }
        // A dashboard page answers to a session only: an API key, any key, opens none (test/dashboard).
        if (route.access === 'dashboard') {
          assert.equal(response.status, 401, what);
          continue;
        }
        // The admin key opens the projects' routes and the install's metrics and nothing else; a
        // project's key never opens those while there is an admin key.
        const refusal =
          route.access === 'public'
            ? undefined
            : (credential.refusal ??
              (credential.admin
                ? ['admin', 'operator'].includes(route.access)
                  ? undefined
                  : RESTRICTED
                : ['full', 'admin', 'operator'].includes(route.access)
                  ? RESTRICTED
                  : undefined));
        if (!refusal) {
          assert.ok(![401, 403].includes(response.status), what);
          continue;
        }
        assert.equal(response.status, refusal.status, what);
        if (route.method === 'HEAD') continue;
        const body = JSON.parse(text);
        assert.deepEqual(Object.keys(body).sort(), ['message', 'name', 'statusCode'], what);
        assert.equal(body.statusCode, refusal.status, what);
        assert.equal(body.name, refusal.name, what);
      }
      checked.push(`${route.method} ${plain(route.url)}`);
    }
    assert.ok(checked.length > 60, `only ${checked.length} routes`);
  });

  it('opens to sending-access keys only the routes that send', () => {
    const sending = t.app.routeTable.filter((route) => route.access === 'sending').map((route) => `${route.method} ${plain(route.url)}`);
    assert.deepEqual(sending.sort(), ['POST /email', 'POST /email/sending', 'POST /emails', 'POST /emails/batch', 'POST /emails/sending']);
    const open = t.app.routeTable.filter((route) => route.access === 'public').map((route) => `${route.method} ${plain(route.url)}`);
    assert.deepEqual(open.sort(), [
      'GET /', 'GET /.well-known/mta-sts.txt', 'GET /dashboard/assets/:name', 'GET /dashboard/sign-in', 'GET /downloads/:kind/:id', 'GET /favicon.ico', 'GET /health', 'GET /openapi.json', 'GET /shared/:token', 'GET /shared/:token/html', 'GET /track/click/*', 'GET /track/open/*', 'GET /unsubscribe/:token',
      'HEAD /', 'HEAD /.well-known/mta-sts.txt', 'HEAD /dashboard/assets/:name', 'HEAD /dashboard/sign-in', 'HEAD /downloads/:kind/:id', 'HEAD /favicon.ico', 'HEAD /health', 'HEAD /openapi.json', 'HEAD /shared/:token', 'HEAD /shared/:token/html', 'HEAD /track/click/*', 'HEAD /track/open/*', 'HEAD /unsubscribe/:token',
      'POST /dashboard/sign-in', 'POST /feedback/mailgun', 'POST /feedback/postmark', 'POST /feedback/sendgrid', 'POST /feedback/ses', 'POST /unsubscribe/:token',
    ]);
    const dashboard = t.app.routeTable.filter((route) => route.url.startsWith('/dashboard') && route.access !== 'public');
    assert.ok(dashboard.length > 5 && dashboard.every((route) => route.access === 'dashboard'), 'every other dashboard route needs a session');
    const admin = t.app.routeTable.filter((route) => route.access === 'admin').map((route) => `${route.method} ${plain(route.url)}`);
    assert.deepEqual(admin.sort(), ['DELETE /projects/:id', 'GET /projects', 'GET /projects/:id', 'HEAD /projects', 'HEAD /projects/:id', 'PATCH /projects/:id', 'POST /projects']);
    const operator = t.app.routeTable.filter((route) => route.access === 'operator').map((route) => `${route.method} ${plain(route.url)}`);
    assert.deepEqual(operator.sort(), ['GET /metrics', 'HEAD /metrics']);
  });
});
