import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../errors.ts';

/** A body over this size counts as large. */
const LARGE_BYTES = 1024 * 1024;

/**
 * An onRequest hook that serves at most `max` requests with a large body (over 1 MB, or of unknown
 * length) at once: each costs several times its size in memory while it is read, parsed, decoded and
 * stored, so without a bound a burst of 40 MB sends would exhaust the heap that the API shares with
 * the worker. Beyond it a request is answered 429 `rate_limit_exceeded` with `retry-after`, once its
 * body has been drained.
 */
export function limitLargeBodies(max: number) {
  let inFlight = 0;
  // A callback hook, not an async one: it runs on every request, and most have small bodies.
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const length = request.headers['content-length'];
    const large = length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > LARGE_BYTES;
    if (!large) return done();
    if (inFlight >= max) {
      void reply.header('retry-after', '1');
      return done(new AppError('rate_limit_exceeded', 'Too many large requests are being processed at once; retry in a moment.'));
    }
    inFlight++;
    reply.raw.once('close', () => inFlight--);
    done();
  };
}
