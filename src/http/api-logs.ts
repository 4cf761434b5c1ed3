import type { App } from '../app.ts';
import type { Context } from '../context.ts';
import { createRequestLogs } from '../domain/api-logs/request-logs.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route's requests are not recorded in the request logs (GET /metrics, GET /logs). */
    apiLog?: false;
  }
  interface FastifyRequest {
    /** The JSON body as it came (app.ts's parser), for the request log. */
    bodyText: string | undefined;
    /** The answer as serialized, when it is JSON, for the request log. */
    sentJson: string | undefined;
  }
}

const isJson = (type: unknown) => typeof type === 'string' && type.startsWith('application/json');

/**
 * Records the API's requests for GET /logs: those made with a valid API key, on a route that does not
 * opt out. Public routes, the dashboard and refused credentials carry no key and are not recorded. The
 * hooks keep references only; the bodies are redacted and written later (domain/api-logs/request-logs.ts).
 * Register before the routes; with MAILROOM_API_LOGS off, nothing is added.
 */
export function recordApiLogs(app: App, ctx: Context): void {
  if (!ctx.config.apiLogs.enabled) return;
  const logs = createRequestLogs(ctx);
  const limit = ctx.config.apiLogs.bodyBytes;
  app.decorateRequest('sentJson', undefined);
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.apiKey !== null && typeof payload === 'string' && isJson(reply.getHeader('content-type'))) request.sentJson = payload;
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const key = request.apiKey;
    if (key !== null && request.routeOptions.config.apiLog !== false) {
      const text = request.bodyText;
      logs.record({
        at: ctx.clock.now(),
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        userAgent: request.headers['user-agent'],
        apiKeyId: key.id,
        projectId: key.project_id,
        durationMs: reply.elapsedTime,
        // A body that failed to parse (400) is not kept; a long one is read from its parsed form, only as far as the limit.
        bodyText: request.body !== undefined && text !== undefined && text.length <= limit ? text : undefined,
        body: text !== undefined && text.length <= limit ? undefined : request.body,
        payload: request.sentJson,
      });
    }
    done();
  });
  // Fastify closes once the requests in flight are answered: what they recorded is written before the writer closes.
  app.addHook('onClose', () => logs.close());
}
