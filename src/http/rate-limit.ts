import rateLimit, { type FastifyRateLimitStore, type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { App } from '../app.ts';
import type { Context } from '../context.ts';
import { effectiveRateLimit, RATE_WINDOW_MS, type RateBudget } from '../domain/api-keys/rate-limits.ts';
import { AppError } from '../errors.ts';

/** The plugin's store over a RateBudget: `current` past `max` means refused. */
function storeOver(budget: RateBudget) {
  return class RateBudgetStore implements FastifyRateLimitStore {
    incr(keyId: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, _window: number, max: number): void {
      budget.take(keyId, max).then(
        (take) => callback(null, { current: take.allowed ? max - take.remaining : max + 1, ttl: take.resetMs }),
        (error: Error) => callback(error),
      );
    }

    // Routes set no limit of their own, so the plugin never asks for a store per route.
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** Requests a second for the request's key; public and dashboard routes carry none. */
async function limitOf(ctx: Context, request: FastifyRequest): Promise<number | null> {
  return request.apiKey ? effectiveRateLimit(ctx, request.apiKey) : null;
}

/**
 * Limits each API key's requests a second (MAILROOM_RATE_LIMIT, its project's `rate_limit`, or the key's own) with
 * @fastify/rate-limit, as Resend signals it: `ratelimit-limit`, `-remaining`, `-reset` and `-policy`
 * on every answer to a limited key, and beyond the limit 429 `rate_limit_exceeded` with `retry-after`. An
 * onRequest hook: add it after authentication's, and it decides before the body is read.
 */
export async function limitRequestRates(app: App, ctx: Context): Promise<onRequestHookHandler> {
  // The limit the hook found for a request, read again by the plugin.
  const limits = new WeakMap<FastifyRequest, number>();
  const options: RateLimitPluginOptions = {
    // Not on every route: the hook below calls the limiter for limited keys only, so that requests of
    // unlimited keys, and those without one, pay one property check rather than the plugin's awaits.
    global: false,
    store: storeOver(ctx.rates),
    timeWindow: RATE_WINDOW_MS,
    keyGenerator: (request) => request.apiKey!.id,
    max: (request) => limits.get(request)!,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, { max, ttl }) => {
      const seconds = Math.ceil(ttl / 1000);
      return new AppError(
        'rate_limit_exceeded',
        `Too many requests. Please limit the number of requests per second (${max} for this API key) and retry after ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
      );
    },
  };
  await app.register(rateLimit, options);
  const limit = app.rateLimit();
  const check = async (request: FastifyRequest, reply: FastifyReply) => {
    const max = await limitOf(ctx, request);
    if (max === null) return;
    limits.set(request, max);
    // Resend's fourth header, which the plugin does not write: the limit and its window in seconds.
    reply.header('ratelimit-policy', `${max};w=${RATE_WINDOW_MS / 1000}`);
    await limit.call(app, request, reply);
  };
  return (request, reply, done) => {
    if (!request.apiKey) return done();
    check(request, reply).then(() => done(), done);
  };
}
