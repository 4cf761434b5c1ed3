import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { emailsChangeMarker } from '../store/emails.ts';

// Live lists: one server-sent-events stream per open page, fed by a single poll per process (the
// newest email and event ids, two index lookups a second) while anyone listens. A change made by any
// process (a worker's delivery, another API process's send) is seen within about a second.

const POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;

export function liveUpdates(ctx: Context) {
  const listeners = new Set<FastifyReply>();
  let marker: string | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function poll(): Promise<void> {
    const next = await emailsChangeMarker(ctx.db).catch(() => marker);
    if (marker !== undefined && next !== marker) for (const reply of listeners) reply.raw.write('event: emails\ndata: changed\n\n');
    marker = next;
  }

  return {
    /** GET /dashboard/events: `event: emails` each time emails change; a comment now and then keeps the connection open. */
    async stream(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
      reply.raw.write('retry: 2000\n\n');
      listeners.add(reply);
      if (!timer) {
        await poll();
        timer = setInterval(() => void poll(), POLL_MS);
      }
      const keepalive = setInterval(() => reply.raw.write(': keepalive\n\n'), KEEPALIVE_MS);
      request.raw.on('close', () => {
        clearInterval(keepalive);
        listeners.delete(reply);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          [timer, marker] = [undefined, undefined];
        }
      });
    },
    close(): void {
      if (timer) clearInterval(timer);
      for (const reply of listeners) reply.raw.end();
      listeners.clear();
    },
  };
}
