import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Instruments } from '../monitoring/instruments.ts';

/**
 * An onResponse hook: each request in Prometheus's counter and latency histogram, by the route as
 * declared (never the path, which can carry a token; a path that matched nothing is `unmatched`).
 */
export function countRequests(instruments: Instruments) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    instruments.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    instruments.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  };
}
