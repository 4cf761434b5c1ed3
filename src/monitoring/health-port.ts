import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Context } from '../context.ts';
import { AppError } from '../errors.ts';
import { checkOperator } from '../http/auth.ts';
import { faultError } from '../store/availability.ts';

/** What a process's `GET /health` answers: its status and body. */
export interface HealthAnswer {
  healthy: boolean;
  body: object;
}

function answer(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

/**
 * `GET /health` and `GET /metrics` on a port of their own, for a supervisor and Prometheus to watch a
 * process that serves no API (a worker's WORKER_HEALTH_PORT, the SMTP listeners' SMTP_HEALTH_PORT):
 * 200 while `health` says healthy, else 503. Bounded like the API: a request has 10 s, an idle
 * connection a minute.
 */
export async function listenHealthPort(ctx: Context, port: number, host: string, health: () => Promise<HealthAnswer>): Promise<Server> {
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 10_000, connectionsCheckingInterval: 1000 }, (request, response) => {
    const path = request.url?.split('?')[0];
    if (path !== '/health' && path !== '/metrics') {
      return answer(response, 404, { statusCode: 404, name: 'not_found', message: 'The requested endpoint does not exist.' });
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(response, 405, { statusCode: 405, name: 'method_not_allowed', message: `Method ${request.method} is not allowed on ${path}.` });
    }
    if (path === '/metrics') return void scrape(ctx, request, response);
    void health().then(({ healthy, body }) => {
      if (!healthy) response.setHeader('retry-after', 5);
      answer(response, healthy ? 200 : 503, body);
    });
  });
  server.setTimeout(60_000);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** GET /metrics for a process that serves no API, with the same full-access key as the API's. */
async function scrape(ctx: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    await checkOperator(ctx, request.headers.authorization);
    const { contentType, body } = await ctx.instruments.scrape();
    response.writeHead(200, { 'content-type': contentType }).end(body);
  } catch (error) {
    const appError = error instanceof AppError ? error : faultError(error);
    if (!appError) {
      ctx.log.error({ err: error }, 'metrics scrape failed');
      return answer(response, 500, { statusCode: 500, name: 'internal_server_error', message: 'The metrics could not be read.' });
    }
    answer(response, appError.status, appError.toBody());
  }
}
