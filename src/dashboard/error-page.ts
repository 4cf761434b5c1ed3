import type { FastifyReply, FastifyRequest } from 'fastify';
import { toAppError } from '../http/error-handler.ts';

// What a page tells a person when a request fails, for every html answer (the dashboard, a shared
// email, the unsubscribe page): each renders it in its own layout.

export interface ErrorPage {
  status: number;
  title: string;
  message: string;
}

/**
 * The status, title and message of the page for `error`: a 5xx says only to try later (its details go
 * to the log, under `doing`), the database away or full says so with Retry-After (logged once, not per
 * page), anything else says what went wrong. `notFound` titles a 404: a dashboard page, or a link.
 */
export function errorPageOf(error: unknown, request: FastifyRequest, reply: FastifyReply, doing: string, notFound = 'Not found'): ErrorPage {
  const appError = toAppError(error, request);
  const { status, retryAfter } = appError;
  if (retryAfter !== undefined) {
    reply.header('retry-after', retryAfter);
    return { status, title: 'Mailroom is unavailable', message: `${appError.message} This page works again once it is back.` };
  }
  if (status >= 500) {
    request.log.error({ err: error }, `${doing} failed`);
    return { status, title: 'Something went wrong', message: 'Please try again later.' };
  }
  return { status, title: status === 404 ? notFound : 'That did not work', message: appError.message };
}
