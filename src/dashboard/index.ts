import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import type { Context } from '../context.ts';
import { AppError } from '../errors.ts';
import { SESSION_MS, signIn, signOut } from '../domain/api-keys/dashboard-sessions.ts';
import { cookieKey, readCookie, SESSION_COOKIE, setCookie, SIGN_IN_COOKIE } from './cookies.ts';
import { errorPageOf } from './error-page.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { liveUpdates } from './live-updates.ts';
import { apiKeyPages } from './pages/api-keys.ts';
import { automationPages } from './pages/automations.ts';
import { broadcastPages } from './pages/broadcasts.ts';
import { contactPages } from './pages/contacts.ts';
import { domainDeliverabilityPages } from './pages/domain-deliverability.ts';
import { domainDmarcPages } from './pages/domain-dmarc.ts';
import { domainPages } from './pages/domains.ts';
import { emailPages } from './pages/emails.ts';
import { metricsPages } from './pages/metrics.ts';
import { projectPages, withProjectBanner } from './pages/projects.ts';
import { receivedPages } from './pages/received.ts';
import { suppressionPages } from './pages/suppressions.ts';
import { templatePages } from './pages/templates.ts';
import { tlsPages } from './pages/tls.ts';
import { webhookPages } from './pages/webhooks.ts';
import { sameToken, sessionHooks } from './session-hook.ts';

// The dashboard, at /dashboard on the API process: server-rendered pages over the domain functions the
// API uses, a stylesheet and a small script, and nothing from anywhere else.

const HTML = 'text/html; charset=utf-8';

/** Every dashboard answer: no framing, no sniffing, no caching, and a policy that loads only our own files. */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** A Host header fit to stand in a policy: a name or an address, and a port. */
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The policy: scripts only from the dashboard's own asset path, not from anywhere on the origin (its
 * downloads are files senders chose). A path needs a host, so it is the one the browser asked for;
 * `http:` also matches `https:` behind a proxy (CSP 3).
 */
function contentSecurityPolicy(request: FastifyRequest, publicUrl: string): string {
  const origin = HOST.test(request.host) ? `${request.protocol}://${request.host}` : publicUrl;
  return `default-src 'none'; script-src ${origin}/dashboard/assets/; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'`;
}

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const SVG = 'image/svg+xml';
// uPlot draws the charts (metrics, a domain's rates): served from its package, as our own files are.
const uplot = (name: string) => createRequire(import.meta.url).resolve(`uplot/dist/${name}`);

const ASSETS: Record<string, { type: string; body: Buffer }> = Object.fromEntries(
  [
    ['app.css', CSS, new URL('./assets/app.css', import.meta.url)],
    ['app.js', JS, new URL('./assets/app.js', import.meta.url)],
    ['metrics-chart.js', JS, new URL('./assets/metrics-chart.js', import.meta.url)],
    ['favicon.svg', SVG, new URL('./assets/favicon.svg', import.meta.url)],
    ['uPlot.min.css', CSS, uplot('uPlot.min.css')],
    ['uPlot.iife.min.js', JS, uplot('uPlot.iife.min.js')],
  ].map(([name, type, file]) => [name as string, { type: type as string, body: readFileSync(file!) }]),
);

/** Where to go after signing in: a dashboard path of this site only (never another site). */
function nextPath(value: unknown): string {
  return typeof value === 'string' && /^\/dashboard(\/[\w\-./?=&%]*)?$/.test(value) && !value.includes('//') ? value : '/dashboard/emails';
}

export function dashboardRoutes(app: App, ctx: Context): void {
  // A browser opening the service's address is sent to the dashboard.
  app.get('/', { config: { access: 'public', overLimit: 'exempt' }, schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
  // Browsers ask for it on every page that names no icon (the API's JSON, the unsubscribe page): an answer, not a 404 in their console.
  app.get('/favicon.ico', { config: { access: 'public', overLimit: 'exempt' }, schema: { hide: true } }, async (_request, reply) => {
    const icon = ASSETS['favicon.svg']!;
    return reply.type(icon.type).header('cache-control', 'public, max-age=86400').send(icon.body);
  });

  app.register(
    async (scope) => {
      const key = cookieKey(ctx.secret);
      const secure = ctx.config.publicUrl.startsWith('https:');
      const hooks = sessionHooks(ctx, key);
      const live = liveUpdates(ctx);
      scope.decorateRequest('session', null);
      scope.decorateRequest('signedIn', null);
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) =>
        done(null, Object.fromEntries(new URLSearchParams(body as string))),
      );
      scope.addHook('onRequest', async (request, reply) =>
        void reply.headers({ ...SECURITY_HEADERS, 'content-security-policy': contentSecurityPolicy(request, ctx.config.publicUrl) }),
      );
      scope.addHook('onRequest', hooks.onRequest);
      scope.addHook('preHandler', hooks.preHandler);
      scope.addHook('onSend', withProjectBanner);
      // Before the server waits for its connections to end: an open stream would hold it forever.
      scope.addHook('preClose', async () => live.close());
      scope.setErrorHandler(async (error, request, reply) => {
        const { status, title, message } = errorPageOf(error, request, reply, 'dashboard request');
        const csrfToken = request.signedIn?.csrfToken;
        return reply.status(status).type(HTML).send(page(title, html`<p>${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`, { csrfToken }));
      });

      const pub = { access: 'public' as const };
      const dashboard = { access: 'dashboard' as const };
      const anySession = { ...dashboard, needs: 'any' as const };

      scope.get('/assets/:name', { config: { ...pub, overLimit: 'exempt' }, schema: { hide: true } }, async (request, reply) => {
        const asset = ASSETS[(request.params as { name: string }).name];
        if (!asset) throw new AppError('not_found', 'No such file');
        return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
      });

      const signInPage = (reply: FastifyReply, status: number, next: string, message?: string) => {
        const csrf = randomBytes(24).toString('base64url');
        reply.header('set-cookie', setCookie(key, SIGN_IN_COOKIE, csrf, 3600, secure));
        const content = html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form class="sign-in" method="post" action="/dashboard/sign-in">
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label>API key (full access)<input type="password" name="api_key" autocomplete="off" required autofocus></label>
<button type="submit">Sign in</button>
</form>
<p>The key printed when Mailroom first started, or any full-access key: <code>npm run keys -- create --name me</code> makes one.
An admin key (<code>MAILROOM_ADMIN_KEY</code>, or one made with <code>npm run keys -- create --admin</code>) signs in to the projects.</p>`;
        return reply.status(status).type(HTML).send(page('Sign in', content, { narrow: true }));
      };

      scope.get('/sign-in', { config: pub, schema: { hide: true } }, async (request, reply) =>
        signInPage(reply, 200, nextPath((request.query as { next?: string }).next)),
      );

      scope.post('/sign-in', { config: pub, schema: { hide: true } }, async (request: FastifyRequest, reply) => {
        const form = (request.body ?? {}) as Record<string, string | undefined>;
        const next = nextPath(form.next);
        const expected = readCookie(request, key, SIGN_IN_COOKIE);
        if (expected === undefined || !sameToken(form._csrf, expected)) return signInPage(reply, 403, next, 'This form has expired: please sign in again.');
        // Failed sign-ins count with failed API keys, per address: past the limit, even the right key waits.
        const wait = app.clientLimits.blockedFor(request);
        if (wait > 0) {
          const minutes = Math.ceil(wait / 60);
          reply.header('retry-after', wait);
          return signInPage(reply, 429, next, `Too many failed sign-ins from your address: try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`);
        }
        try {
          const { token, session } = await signIn(ctx, form.api_key ?? '');
          reply.header('set-cookie', [setCookie(key, SESSION_COOKIE, token, SESSION_MS / 1000, secure), setCookie(key, SIGN_IN_COOKIE, '', 0, secure)]);
          // The admin browses no project yet: its first page is the list, whatever page asked it to sign in.
          return reply.redirect(session.admin ? '/dashboard/projects' : next, 303);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          if (error.code === 'invalid_api_key') app.clientLimits.failed(request);
          return signInPage(reply, error.status, next, error.message);
        }
      });

      scope.post('/sign-out', { config: anySession, schema: { hide: true } }, async (request, reply) => {
        const token = readCookie(request, key, SESSION_COOKIE);
        if (token !== undefined) await signOut(ctx, token);
        reply.header('set-cookie', setCookie(key, SESSION_COOKIE, '', 0, secure));
        return reply.redirect('/dashboard/sign-in', 303);
      });

      scope.get('/', { config: anySession, schema: { hide: true } }, async (request, reply) =>
        reply.redirect(request.session ? '/dashboard/emails' : '/dashboard/projects', 302),
      );
      scope.get('/events', { config: dashboard, schema: { hide: true } }, (request, reply) => live.stream(request, reply));

      emailPages(scope, ctx);
      receivedPages(scope, ctx);
      suppressionPages(scope, ctx);
      domainPages(scope, ctx);
      domainDeliverabilityPages(scope, ctx);
      domainDmarcPages(scope, ctx);
      apiKeyPages(scope, ctx);
      webhookPages(scope, ctx);
      contactPages(scope, ctx);
      broadcastPages(scope, ctx);
      automationPages(scope, ctx);
      templatePages(scope, ctx);
      metricsPages(scope, ctx);
      tlsPages(scope, ctx);
      projectPages(scope, ctx);
    },
    { prefix: '/dashboard' },
  );
}
