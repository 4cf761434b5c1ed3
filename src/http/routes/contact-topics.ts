import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import type { TopicRef } from '../../domain/contacts/contact-input.ts';
import * as topics from '../../domain/contacts/topics.ts';
import { ContactParams, Subscription, TopicRefs } from '../schemas/contacts.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { listOfSchema, Nullable } from '../schemas/common.ts';
import { compileCheck } from '../validation.ts';

const ContactTopic = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  subscription: Subscription,
});

const TopicsBody = Type.Union([TopicRefs, Type.Object({ topics: TopicRefs })], {
  description: 'an array of {id, subscription}, bare (as the SDK sends it) or as {"topics": [...]}',
});

const checkTopics = compileCheck<{ topics: TopicRef[] }>(Type.Object({ topics: TopicRefs }));

// The schema above documents the route; the body is read here, so that a bare array and {topics} get
// the same messages, naming the entry at fault.
function readTopics(body: unknown): TopicRef[] {
  const result = checkTopics(Array.isArray(body) ? { topics: body } : body);
  if ('error' in result) throw result.error;
  return result.value.topics;
}

// Resend's documents disagree on this answer (§12 of the reference): the union of their fields.
const TopicsUpdated = Type.Object({
  object: Type.Literal('contact_topics'),
  id: Type.String({ description: 'The contact id' }),
  contact_id: Type.String(),
  topics: Type.Array(Type.Object({ id: Type.String(), subscription: Subscription })),
});

export function contactTopicRoutes(app: App, ctx: Context): void {
  app.get(
    '/contacts/:id/topics',
    {
      schema: {
        summary: "Every topic with the contact's subscription (its own choice, else the topic's default)",
        params: ContactParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(ContactTopic) },
      },
    },
    async (request) => listOf(await topics.listContactTopics(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: false }))),
  );

  app.patch(
    '/contacts/:id/topics',
    {
      schema: { summary: "Set a contact's topic subscriptions", params: ContactParams, body: TopicsBody, response: { 200: TopicsUpdated } },
      validatorCompiler: () => () => true,
    },
    async (request) => {
      const result = await topics.updateContactTopics(ctx, projectOf(request), request.params.id, readTopics(request.body));
      return { object: 'contact_topics' as const, contact_id: result.id, ...result };
    },
  );
}
