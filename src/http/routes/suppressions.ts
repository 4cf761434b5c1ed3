import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as suppressions from '../../domain/suppressions/suppressions.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { deleted, listOfSchema, MAX, Nullable, objectId, Str } from '../schemas/common.ts';

/** The most addresses or ids one batch request takes. */
const MAX_BATCH = 100;

const Origin = Type.Enum(['bounce', 'complaint', 'manual']);

const Addresses = Type.Array(Str(MAX.line), { maxItems: MAX_BATCH });

const SuppressionItem = Type.Object({
  id: Type.String(),
  email: Type.String(),
  origin: Type.String(),
  source_id: Nullable(Type.String()),
  created_at: Type.String(),
});

const SuppressionParams = Type.Object({ id: Str(MAX.id, 'The suppression id or email address') });

export function suppressionRoutes(app: App, ctx: Context): void {
  app.post(
    '/suppressions',
    {
      schema: {
        summary: 'Add an address to the suppression list (or answer the id of its entry)',
        body: Type.Object({ email: Str(MAX.line) }),
        response: { 201: objectId('suppression') },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ object: 'suppression' as const, ...(await suppressions.addSuppression(ctx, projectOf(request), request.body.email)) }),
  );

  app.get(
    '/suppressions',
    {
      schema: {
        summary: 'List the suppression list, newest first (always paginated, 20 by default)',
        querystring: Type.Object({ ...PageQuery.properties, origin: Type.Optional(Origin) }),
        response: { 200: listOfSchema(SuppressionItem) },
      },
    },
    async (request) =>
      listOf(await suppressions.listSuppressions(ctx, projectOf(request), request.query.origin, parsePage(request.query, { everything: false }))),
  );

  app.post(
    '/suppressions/batch/add',
    {
      schema: {
        summary: `Add up to ${MAX_BATCH} addresses to the suppression list`,
        body: Type.Object({ emails: Addresses }),
        response: { 201: Type.Object({ data: Type.Array(objectId('suppression')) }) },
      },
    },
    async (request, reply) => {
      const added = await suppressions.addSuppressions(ctx, projectOf(request), request.body.emails);
      return reply.status(201).send({ data: added.map((entry) => ({ object: 'suppression' as const, ...entry })) });
    },
  );

  app.post(
    '/suppressions/batch/remove',
    {
      schema: {
        summary: `Remove up to ${MAX_BATCH} entries from the suppression list, by emails or by ids`,
        body: Type.Object({
          emails: Type.Optional(Addresses),
          ids: Type.Optional(Type.Array(Str(MAX.id), { maxItems: MAX_BATCH })),
        }),
        response: { 200: Type.Object({ data: Type.Array(deleted('suppression')) }) },
      },
    },
    async (request) => {
      const removed = await suppressions.removeSuppressions(ctx, projectOf(request), request.body);
      return { data: removed.map((entry) => ({ object: 'suppression' as const, ...entry })) };
    },
  );

  app.get(
    '/suppressions/:id',
    {
      schema: {
        summary: 'Retrieve a suppression by id or email',
        params: SuppressionParams,
        response: { 200: Type.Object({ object: Type.Literal('suppression'), ...SuppressionItem.properties }) },
      },
    },
    async (request) => suppressions.getSuppression(ctx, projectOf(request), request.params.id),
  );

  app.delete(
    '/suppressions/:id',
    { schema: { summary: 'Remove a suppression by id or email', params: SuppressionParams, response: { 200: deleted('suppression') } } },
    async (request) => ({ object: 'suppression' as const, ...(await suppressions.removeSuppression(ctx, projectOf(request), request.params.id)), deleted: true }),
  );
}
