import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { ping } from '../../store/db.ts';

export function systemRoutes(app: App, ctx: Context): void {
  app.get(
    '/health',
    {
      // Load balancers and health checks call it often, from one address.
      config: { access: 'public', overLimit: 'exempt' },
      schema: { summary: 'Liveness: the database is open and migrated', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => {
      await ping(ctx.db);
      return { status: 'ok' as const };
    },
  );

  // Prometheus's text format; its `authorization` setting sends a full-access key as Bearer.
  app.get('/metrics', { config: { apiLog: false }, schema: { summary: "This process's metrics, in Prometheus's text format", hide: true } }, async (_request, reply) => {
    const { contentType, body } = await ctx.instruments.scrape();
    return reply.type(contentType).send(body);
  });

  app.get('/openapi.json', { config: { access: 'public', overLimit: 'exempt' }, schema: { hide: true } }, async () => app.swagger());
}
