import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'report': served even when the process is overloaded, to say so (GET /health, GET /metrics). */
    shedding?: 'report';
  }
}

/** An event loop this late serves everyone late: past it, new requests are refused at once. */
const MAX_EVENT_LOOP_DELAY_MS = 1000;

/**
 * The delay is the mean over this long: an overloaded loop is late at every turn, while a single long
 * turn (a start compiling its schemas, a garbage collection) is not overload and sheds nothing.
 */
const SAMPLE_MS = 5000;

/** The share of V8's heap limit past which new requests are refused, before the process runs out of memory. */
const HEAP_SHARE = 0.9;

/** Why the process sheds load now, in words; undefined while it does not. */
export function overload(app: App): string | undefined {
  if (!app.isUnderPressure()) return undefined;
  const { eventLoopDelay, heapUsed } = app.memoryUsage();
  return eventLoopDelay > MAX_EVENT_LOOP_DELAY_MS
    ? `its event loop lags ${Math.round(eventLoopDelay)} ms`
    : `its heap holds ${Math.round(heapUsed / 2 ** 20)} MB, near its limit`;
}

/** The answer to a request shed, in the error shape: 503 service_unavailable, with Retry-After. */
export function overloaded(why: string): AppError {
  return new AppError('service_unavailable', `Mailroom is overloaded (${why}); try again in a few seconds.`);
}

/**
 * Sheds load with @fastify/under-pressure: while the event loop lags more than a second, or the heap
 * nears its limit, new requests are answered 503 at once, before authentication or their body, rather
 * than everyone late. Register it before the other hooks.
 */
export async function shedLoad(app: App): Promise<void> {
  await app.register(underPressure, {
    maxEventLoopDelay: MAX_EVENT_LOOP_DELAY_MS,
    sampleInterval: SAMPLE_MS,
    maxHeapUsedBytes: Math.round(getHeapStatistics().heap_size_limit * HEAP_SHARE),
    // Thrown, the answer is the error handler's: the error shape, with Retry-After.
    async pressureHandler(request) {
      if (request.routeOptions.config.shedding === 'report') return;
      throw overloaded(overload(app) ?? 'it is under pressure');
    },
  });
}
