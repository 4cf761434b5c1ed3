import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { authFailures } from '../limits/auth-failures.ts';
import { clientKey } from '../limits/client-key.ts';
import type { Context } from '../context.ts';
import { AppError } from '../errors.ts';

// Limits per client address (request.ip: the socket's, or the client a trusted proxy names, by
// MAILROOM_TRUST_PROXY; an IPv6 /64 counts as one, clientKey), in this process's memory
// (docs/operations.md#per-client-limits):
// - failed authentications: unknown or revoked API keys and failed dashboard sign-ins; past
//   MAILROOM_MAX_AUTH_FAILURES in 10 minutes the address is refused, even with a valid key, until the
//   window ends, as SMTP submission does;
// - the public routes' request rate (MAILROOM_PUBLIC_RATE_LIMIT a second), which no key guards.

declare module 'fastify' {
  interface FastifyInstance {
    clientLimits: ClientLimits;
  }
  interface FastifyContextConfig {
    /**
     * What a public route does past its client's request rate: `refuse` (429, the default); `answer`
     * (served, nothing recorded: a tracking pixel or link must never break); `exempt` (never limited:
     * health checks and static files, which cost no database work).
     */
    overLimit?: 'refuse' | 'answer' | 'exempt';
  }
  interface FastifyRequest {
    /** Past its client's public request rate on a route that answers anyway: record nothing. */
    overLimit: boolean;
  }
}

const WINDOW_MS = 1000;

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/**
 * Requests per client (clientKey of its address) in the clock's current second. The map starts over
 * each second, so it holds no more clients than one second's requests came from.
 */
function requestWindows(now: () => number) {
  let window = -1;
  let counts = new Map<string, number>();
  return (address: string): number => {
    const current = Math.floor(now() / WINDOW_MS);
    if (current !== window) [window, counts] = [current, new Map<string, number>()];
    const client = clientKey(address);
    const count = (counts.get(client) ?? 0) + 1;
    counts.set(client, count);
    return count;
  };
}

export type ClientLimits = ReturnType<typeof clientLimits>;

export function clientLimits(ctx: Context) {
  const { publicRateLimit: max, maxAuthFailures } = ctx.config.http;
  const now = () => ctx.clock.now();
  const failures = authFailures(maxAuthFailures, now);
  const count = requestWindows(now);
  const limited = ctx.instruments.clientLimited;
  /** Seconds until the request's address may authenticate again; 0 when it may now. */
  const blockedFor = (request: FastifyRequest): number => Math.ceil(failures.blockedFor(request.ip) / 1000);

  return {
    blockedFor,

    /** Counts a failed authentication (an unknown or revoked key) against the request's address. */
    failed: (request: FastifyRequest): void => failures.add(request.ip),

    /** Throws 429 with retry-after when the request's address has failed to authenticate too often. */
    refuseIfBlocked(request: FastifyRequest, reply: FastifyReply): void {
      const seconds = blockedFor(request);
      if (seconds === 0) return;
      limited.inc({ limit: 'auth_failures', action: 'refused' });
      reply.header('retry-after', seconds);
      throw new AppError('rate_limit_exceeded', `Too many requests with an invalid API key from this address. Please retry after ${plural(seconds, 'second')}.`);
    },

    /** onRequest: the public routes' rate per address; undefined when MAILROOM_PUBLIC_RATE_LIMIT is 0. */
    limitPublicRoutes:
      max === 0
        ? undefined
        : (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
            const { access, overLimit = 'refuse' } = request.routeOptions.config;
            if (access !== 'public' || overLimit === 'exempt' || request.is404) return done();
            const n = count(request.ip);
            if (n <= max) return done();
            if (n === max + 1) request.log.warn({ client: request.ip, limit: max }, 'a client is past MAILROOM_PUBLIC_RATE_LIMIT: refused, and its tracking fetches not recorded, for the rest of the second');
            if (overLimit === 'answer') {
              request.overLimit = true;
              limited.inc({ limit: 'public_rate', action: 'unrecorded' });
              return done();
            }
            limited.inc({ limit: 'public_rate', action: 'refused' });
            reply.header('retry-after', 1);
            done(new AppError('rate_limit_exceeded', `Too many requests from this address. Please limit the number of requests per second (${max} for each address) and retry after 1 second.`));
          },
  };
}
