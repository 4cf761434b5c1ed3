import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { findSession, type Session } from '../domain/api-keys/dashboard-sessions.ts';
import { readCookie, SESSION_COOKIE, type CookieKey } from './cookies.ts';

declare module 'fastify' {
  interface FastifyRequest {
    session: Session | null;
  }
}

/** Whether two tokens are the same, in constant time. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * onRequest for the dashboard's `access: 'dashboard'` routes: no session, a page sends the browser to
 * sign in (a script's request gets 401); preHandler: every change (any method but GET and HEAD) must
 * carry the session's CSRF token, as the form field `_csrf` or the `x-csrf-token` header, else 403.
 */
export function sessionHooks(ctx: Context, key: CookieKey) {
  return {
    async onRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (request.routeOptions.config.access !== 'dashboard') return;
      const token = readCookie(request, key, SESSION_COOKIE);
      request.session = token === undefined ? null : ((await findSession(ctx, token)) ?? null);
      if (request.session) return;
      if (request.method === 'GET' && request.headers.accept?.includes('text/html')) {
        return reply.redirect(`/dashboard/sign-in?next=${encodeURIComponent(request.url)}`, 303);
      }
      return reply.status(401).type('text/plain; charset=utf-8').send('Sign in to the dashboard first.');
    },
    async preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (!request.session || request.method === 'GET' || request.method === 'HEAD') return;
      const field = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (sameToken(request.headers['x-csrf-token'] ?? field, request.session.csrfToken)) return;
      return reply.status(403).type('text/plain; charset=utf-8').send('This form has expired or did not come from the dashboard: reload the page and try again.');
    },
  };
}
