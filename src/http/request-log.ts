import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Logger } from 'pino';

/**
 * An onResponse hook: one `info` line per request, with the request id (from the request's logger), the
 * method, the route as declared (never the path itself, which can carry an unsubscribe token or an
 * email address), the status, the duration and the API key's id. Never the key, never the body.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  // The line's fields are not even gathered when info is off.
  if ((request.log as Logger).isLevelEnabled('info')) {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? null, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, key: request.apiKey?.id },
      'request',
    );
  }
  done();
}
