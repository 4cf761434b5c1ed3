import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as topics from '../../domain/contacts/topics.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { TopicBody } from '../schemas/contacts.ts';
import { deleted, IdParams, listOfSchema, Nullable, objectId, UUID } from '../schemas/common.ts';

const TopicItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  default_subscription: Type.String(),
  visibility: Type.String(),
  created_at: Type.String(),
});

export function topicRoutes(app: App, ctx: Context): void {
  app.post(
    '/topics',
    { schema: { summary: 'Create a topic', body: TopicBody, response: { 201: objectId('topic') } } },
    async (request, reply) => reply.status(201).send({ object: 'topic' as const, ...(await topics.createTopic(ctx, projectOf(request), request.body)) }),
  );

  app.get(
    '/topics',
    {
      schema: {
        summary: 'List topics (always paginated, 20 by default)',
        querystring: PageQuery,
        response: { 200: listOfSchema(TopicItem) },
      },
    },
    async (request) => listOf(await topics.listTopics(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/topics/:id${UUID}`,
    {
      schema: {
        summary: 'Retrieve a topic',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('topic'), ...TopicItem.properties }) },
      },
    },
    async (request) => ({ object: 'topic' as const, ...(await topics.findTopicOrThrow(ctx, projectOf(request), request.params.id)) }),
  );

  app.patch(
    `/topics/:id${UUID}`,
    {
      schema: {
        summary: 'Update a topic (not its default subscription)',
        params: IdParams,
        body: TopicBody,
        response: { 200: objectId('topic') },
      },
    },
    async (request) => {
      await topics.updateTopic(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'topic' as const, id: request.params.id };
    },
  );

  app.delete(
    `/topics/:id${UUID}`,
    { schema: { summary: 'Delete a topic and its subscriptions', params: IdParams, response: { 200: deleted('topic') } } },
    async (request) => {
      await topics.deleteTopic(ctx, projectOf(request), request.params.id);
      return { object: 'topic' as const, id: request.params.id, deleted: true };
    },
  );
}
