import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, missingField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/topics.ts';
import { logEvents, type NewEvent } from '../events/event-log.ts';
import type { WebhookEventType } from '../webhooks/event-types.ts';
import { topicsEvent } from './contact-events.ts';
import { checkTopicRefs, findContactOrThrow, type TopicRef } from './contact-input.ts';

export interface TopicInput {
  name?: string;
  description?: string | null;
  default_subscription?: string;
  visibility?: string;
}

const SUBSCRIPTIONS = ['opt_in', 'opt_out'];
const VISIBILITIES = ['public', 'private'];

function checkLength(value: string, field: string, max: number): string {
  if (value.length > max) throw invalidField(field, `must be at most ${max} characters.`);
  return value;
}

function checkChoice<T extends string>(value: string, field: string, choices: string[]): T {
  if (!choices.includes(value)) throw invalidField(field, `must be ${choices.map((c) => `"${c}"`).join(' or ')}.`);
  return value as T;
}

/** A topic.* webhook event: the topic as it stands after the change. */
function topicEvent(type: WebhookEventType, topic: store.TopicRow, at: string): NewEvent {
  const { id, name, description, default_subscription, visibility, created_at } = topic;
  return {
    project: topic.project_id,
    type,
    data: { id, name, description, default_subscription, visibility, deleted: type === 'topic.deleted', created_at: isoTime(created_at), updated_at: isoTime(at) },
  };
}

export async function findTopicOrThrow(ctx: Context, project: string, id: string): Promise<store.TopicRow> {
  const topic = await store.findTopic(ctx.db, project, id.toLowerCase());
  if (!topic) throw notFound('Topic');
  return topic;
}

/** POST /topics: `default_subscription` is fixed for the topic's life; visibility defaults to private. */
export async function createTopic(ctx: Context, project: string, input: TopicInput): Promise<{ id: string }> {
  if (input.name === undefined) throw missingField('name');
  if (input.default_subscription === undefined) throw missingField('default_subscription');
  const row: store.TopicRow = {
    id: newId(),
    project_id: project,
    name: checkLength(input.name, 'name', 50),
    description: input.description == null ? null : checkLength(input.description, 'description', 200),
    default_subscription: checkChoice(input.default_subscription, 'default_subscription', SUBSCRIPTIONS),
    visibility: checkChoice(input.visibility ?? 'private', 'visibility', VISIBILITIES),
    created_at: toTimestamp(ctx.clock.now()),
  };
  await ctx.writer.transaction(async (tx) => {
    await store.insertTopic(tx, row);
    await logEvents(ctx, tx, [topicEvent('topic.created', row, row.created_at)], row.created_at);
  });
  return { id: row.id };
}

export async function listTopics(ctx: Context, project: string, page: PageRequest) {
  return store.listTopics(ctx.db, project, page);
}

/** PATCH /topics/:id: name, description and visibility change; the default subscription cannot. */
export async function updateTopic(ctx: Context, project: string, id: string, input: TopicInput): Promise<void> {
  const topic = await findTopicOrThrow(ctx, project, id);
  if (input.default_subscription !== undefined && input.default_subscription !== topic.default_subscription) {
    throw invalidField('default_subscription', 'cannot be changed after the topic is created.');
  }
  const changes: Parameters<typeof store.updateTopic>[3] = {};
  if (input.name !== undefined) changes.name = checkLength(input.name, 'name', 50);
  if (input.description !== undefined) {
    changes.description = input.description === null ? null : checkLength(input.description, 'description', 200);
  }
  if (input.visibility !== undefined) {
    changes.visibility = checkChoice<store.TopicRow['visibility']>(input.visibility, 'visibility', VISIBILITIES);
  }
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    await store.updateTopic(tx, project, topic.id, changes);
    await logEvents(ctx, tx, [topicEvent('topic.updated', { ...topic, ...changes }, at)], at);
  });
}

export async function deleteTopic(ctx: Context, project: string, id: string): Promise<void> {
  const topic = await findTopicOrThrow(ctx, project, id);
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    await store.deleteTopic(tx, project, topic.id);
    await logEvents(ctx, tx, [topicEvent('topic.deleted', topic, at)], at);
  });
}

/** GET /contacts/:id_or_email/topics: every topic, with the contact's choice or the topic's default. */
export async function listContactTopics(ctx: Context, project: string, idOrEmail: string, page: PageRequest) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  const result = await store.listContactTopics(ctx.db, project, contact.id, page);
  const data = result.data.map(({ visibility: _, ...row }) => ({ ...row, subscription: row.subscription }));
  return { has_more: result.has_more, data };
}

/** PATCH /contacts/:id_or_email/topics: sets the contact's choice on each topic given. */
export async function updateContactTopics(ctx: Context, project: string, idOrEmail: string, refs: TopicRef[]) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  const topics = await checkTopicRefs(ctx, project, refs, 'topics');
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction(async (tx) => {
    await store.setSubscriptions(tx, topics.map((t) => ({ contact_id: contact.id, ...t })));
    await logEvents(ctx, tx, [topicsEvent(contact, topics)], at);
  });
  return { id: contact.id, topics: topics.map((t) => ({ id: t.topic_id, subscription: t.subscription })) };
}
