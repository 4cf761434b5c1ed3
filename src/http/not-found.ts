import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { AppError, clip, quoted } from '../errors.ts';
import { drainBody } from './error-handler.ts';
import { UUID } from './schemas/common.ts';

// What a request no route took is told, the same way for every resource: a path is known when a route
// has its shape (the same segments, whatever its parameters hold), so `POST /domains/x` and
// `POST /contacts/x` are both 405; a known path and method whose id is not an id is 404. docs/api.md.

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A route's path as segments: a literal, a parameter (with its pattern, if any) or the rest (`*`). */
type Segment = { literal: string } | { pattern: string | undefined } | { rest: true };

interface Shape {
  method: string;
  segments: Segment[];
}

function segmentsOf(url: string): Segment[] {
  return url
    .split('/')
    .slice(1)
    .map((part): Segment => {
      if (part === '*') return { rest: true };
      if (!part.startsWith(':')) return { literal: part };
      const open = part.indexOf('(');
      return { pattern: open === -1 ? undefined : part.slice(open, part.lastIndexOf(')') + 1) };
    });
}

/** Whether `parts` has the shape of `segments`; a parameter takes any non-empty segment. */
function fits(segments: Segment[], parts: string[]): boolean {
  for (const [i, segment] of segments.entries()) {
    if ('rest' in segment) return true;
    const part = parts[i];
    if (part === undefined || ('literal' in segment ? part !== segment.literal : part === '')) return false;
  }
  return parts.length === segments.length;
}

/** The first part that a parameter's pattern (an id) refuses. */
function notAnId(segments: Segment[], parts: string[]): string | undefined {
  const uuid = new RegExp(UUID.slice(1, -1));
  return parts.find((part, i) => {
    const segment = segments[i];
    return segment !== undefined && 'pattern' in segment && segment.pattern === UUID && !uuid.test(part);
  });
}

const unknown = () => new AppError('not_found', 'The requested endpoint does not exist.');

/** Why no route took `method` on `url`, and the methods that path allows when that is the reason. */
function refusal(app: App, shapes: Shape[], method: string, url: string): { error: AppError; allow?: string[] } {
  // A route that takes this very path by another method, else routes of its shape.
  let allow: string[] = METHODS.filter((m) => m !== method && app.findRoute({ method: m, url }));
  if (allow.length === 0) {
    const parts = url.split('/').slice(1);
    const alike = shapes.filter((shape) => fits(shape.segments, parts));
    const same = alike.find((shape) => shape.method === method);
    if (same) {
      const value = notAnId(same.segments, parts);
      return { error: value === undefined ? unknown() : new AppError('not_found', `Not found: ${quoted(value)} is not an id.`) };
    }
    allow = [...new Set(alike.map((shape) => shape.method))];
  }
  if (allow.length === 0) return { error: unknown() };
  const message = `Method ${method} is not allowed on ${clip(url)}; it allows ${allow.join(', ')}.`;
  return { error: new AppError('method_not_allowed', message), allow };
}

/** The not-found handler: unknown path 404; known path, other method 405 with `Allow`; known path and method, a malformed id 404. */
export function notFoundHandler(app: App) {
  let shapes: Shape[] | undefined;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    shapes ??= app.routeTable.filter((r) => r.method !== 'HEAD').map((r) => ({ method: r.method, segments: segmentsOf(r.url) }));
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const { error, allow } = refusal(app, shapes, method, request.url.split('?')[0]!);
    if (allow) reply.header('allow', allow.join(', '));
    await drainBody(request);
    return reply.status(error.status).send(error.toBody());
  };
}
