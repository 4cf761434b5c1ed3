import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { isUuid } from '../time/ids.ts';

/** The id in the path parameter `name`, lower-cased; anything but an id is the page of a thing not found. */
export function pathId(request: FastifyRequest, name: string, what: string): string {
  const value = (request.params as Record<string, string | undefined>)[name];
  if (!value || !isUuid(value)) throw new AppError('not_found', `${what} not found`);
  return value.toLowerCase();
}
