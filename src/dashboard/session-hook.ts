import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { findSession, type Session, type SignedIn } from '../domain/api-keys/dashboard-sessions.ts';
import { hasAdminKey } from '../domain/projects/admin-key.ts';
import { readCookie, SESSION_COOKIE, type CookieKey } from './cookies.ts';
import { html } from './html.ts';
import { page as layout } from './layout.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What a dashboard route needs of its session: a project to show (the default; an admin's session
     * has one once it picks one), an admin key's session (the projects pages), or any session.
     * `operator`: the whole install's figures, every project's: an admin's session when the install
     * has an admin key, else any.
     */
    needs?: 'project' | 'admin' | 'operator' | 'any';
  }
  interface FastifyRequest {
    /** The session browsing a project: what every project page reads. */
    session: Session | null;
    /** The session, whether or not it browses a project. */
    signedIn: SignedIn | null;
  }
}

/** Whether two tokens are the same, in constant time. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}

const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

/**
 * onRequest for the dashboard's `access: 'dashboard'` routes: no session, a page sends the browser to
 * sign in (a script's request gets 401); the admin's session without a project is sent to the projects
 * list, and a project key's session never opens the projects pages (403). preHandler: every change (any
 * method but GET and HEAD) must carry the session's CSRF token, as the form field `_csrf` or the
 * `x-csrf-token` header, else 403.
 */
export function sessionHooks(ctx: Context, key: CookieKey) {
  return {
    async onRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const { access, needs = 'project' } = request.routeOptions.config;
      if (access !== 'dashboard') return;
      const token = readCookie(request, key, SESSION_COOKIE);
      const found = token === undefined ? undefined : await findSession(ctx, token);
      const page = request.method === 'GET' && request.headers.accept?.includes('text/html');
      if (!found) {
        if (page) return reply.redirect(`/dashboard/sign-in?next=${encodeURIComponent(request.url)}`, 303);
        return reply.status(401).type(TEXT).send('Sign in to the dashboard first.');
      }
      request.signedIn = found;
      request.session = found.projectId === null ? null : { ...found, projectId: found.projectId };
      if ((needs === 'admin' || (needs === 'operator' && (await hasAdminKey(ctx)))) && !found.admin) {
        const does = needs === 'admin' ? 'manages projects' : 'sees the whole install’s figures';
        const content = html`<p>Only an admin key (MAILROOM_ADMIN_KEY, or one made with <code>npm run keys -- create --admin</code>) ${does}.</p><p><a href="/dashboard">Back to the dashboard</a></p>`;
        return reply.status(403).type(HTML).send(layout('Not allowed', content, { csrfToken: found.csrfToken }));
      }
      if (needs === 'project' && !request.session) {
        if (page) return reply.redirect('/dashboard/projects', 303);
        return reply.status(409).type(TEXT).send('Pick a project on the projects page first.');
      }
    },
    async preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (!request.signedIn || request.method === 'GET' || request.method === 'HEAD') return;
      const field = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (sameToken(request.headers['x-csrf-token'] ?? field, request.signedIn.csrfToken)) return;
      return reply.status(403).type(TEXT).send('This form has expired or did not come from the dashboard: reload the page and try again.');
    },
  };
}
