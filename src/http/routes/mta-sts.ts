import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { servedPolicy } from '../../domain/sending-domains/mta-sts.ts';

// The MTA-STS policy of the domains that receive here, asked for as https://mta-sts.<domain>/ (RFC 8461):
// anyone may read it, by the Host header.

export function mtaStsRoutes(app: App, ctx: Context): void {
  app.get(
    '/.well-known/mta-sts.txt',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The MTA-STS policy of the domain the Host header names (mta-sts.<domain>), when it receives mail here; 404 otherwise',
        response: { 200: { description: 'The policy (text/plain)', content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => reply.type('text/plain; charset=utf-8').send(await servedPolicy(ctx, request.hostname)),
  );
}
