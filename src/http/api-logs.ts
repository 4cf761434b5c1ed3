import type { App } from '../app.ts';
import type { Context } from '../context.ts';
import { createRequestLogs } from '../domain/api-logs/request-logs.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route's requests are not recorded in the request logs (GET /metrics, GET /logs). */
    apiLog?: false;
  }
  interface FastifyRequest {
    /** The payload onSend saw, kept for the request log. */
    sentPayload: unknown;
  }
}

/**
 * Records the API's requests for GET /logs: those made with a valid API key, on a route that does not
 * opt out. Public routes, the dashboard and refused credentials carry no key and are not recorded. The
 * hooks keep references only; the bodies are redacted and written later (domain/api-logs/request-logs.ts).
 * Register before the routes; with MAILROOM_API_LOGS off, nothing is added.
 */
export function recordApiLogs(app: App, ctx: Context): void {
  if (!ctx.config.apiLogs.enabled) return;
  const logs = createRequestLogs(ctx);
  app.decorateRequest('sentPayload', undefined);
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (request.apiKey !== null) request.sentPayload = payload;
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const key = request.apiKey;
    if (key !== null && request.routeOptions.config.apiLog !== false) {
      logs.record({
        at: ctx.clock.now(),
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        userAgent: request.headers['user-agent'],
        apiKeyId: key.id,
        durationMs: reply.elapsedTime,
        body: request.body,
        payload: request.sentPayload,
      });
    }
    done();
  });
  // Fastify closes once the requests in flight are answered: what they recorded is written before the writer closes.
  app.addHook('onClose', () => logs.close());
}
