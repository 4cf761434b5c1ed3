import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { overload } from '../load-shedding.ts';
import { databaseDown, deliveryPaused } from '../../monitoring/health.ts';

export function systemRoutes(app: App, ctx: Context): void {
  app.get(
    '/health',
    {
      // Load balancers and health checks call it often, from one address, and most when things go wrong.
      config: { access: 'public', overLimit: 'exempt', shedding: 'report' },
      schema: {
        summary:
          'Readiness: 200 while the database works and the process keeps up; 503 naming what does not (database, load). `delivery: paused` says why the workers deliver nothing now (the relay cannot be reached or refuses the sender): the API still accepts mail',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), delivery: Type.Optional(Type.Literal('paused')), delivery_message: Type.Optional(Type.String()) }),
          503: Type.Object({
            statusCode: Type.Literal(503),
            name: Type.Literal('service_unavailable'),
            message: Type.String(),
            status: Type.Literal('unavailable'),
            database: Type.Optional(Type.Union([Type.Literal('unavailable'), Type.Literal('read_only'), Type.Literal('full')])),
            load: Type.Optional(Type.Literal('overloaded')),
          }),
        },
      },
    },
    async (_request, reply) => {
      const [down, load] = [await databaseDown(ctx), overload(app)];
      if (!down && !load) {
        const paused = await deliveryPaused(ctx);
        return { status: 'ok' as const, ...(paused && { delivery: 'paused' as const, delivery_message: paused }) };
      }
      // The error shape, and what is down by name, so that a load balancer routes away and a person sees why.
      const message = [down?.message, load && `Mailroom is overloaded: ${load}.`].filter(Boolean).join(' ');
      const named = { ...(down && { database: down.database }), ...(load && { load: 'overloaded' as const }) };
      reply.header('retry-after', new AppError('service_unavailable', message).retryAfter);
      return reply.status(503).send({ statusCode: 503, name: 'service_unavailable', message, status: 'unavailable', ...named });
    },
  );

  // Prometheus's text format; its `authorization` setting sends the admin key (or, without one, a full-access key) as Bearer.
  app.get('/metrics', { config: { access: 'operator', apiLog: false, shedding: 'report' }, schema: { summary: "This process's metrics, in Prometheus's text format", hide: true } }, async (_request, reply) => {
    const { contentType, body } = await ctx.instruments.scrape();
    return reply.type(contentType).send(body);
  });

  app.get('/openapi.json', { config: { access: 'public', overLimit: 'exempt' }, schema: { hide: true } }, async () => app.swagger());
}
