import type { Context } from '../context.ts';
import { invalidField, quoted } from '../errors.ts';
import { findContactsByEmails } from '../store/contacts.ts';
import type { EmailTable } from '../store/schema.ts';
import { findTopic, findTopicSubscriptions, type TopicRow } from '../store/topics.ts';

export interface TopicCheck {
  topicId: string | null;
  /** Recipients the topic does not allow, each with the reason recorded on its `failed` event. */
  blocked: Map<string, string>;
}

interface Subscriber {
  unsubscribed: number;
  subscription: string | null;
}

function blockReason(topic: TopicRow, contact: Subscriber | undefined): string | undefined {
  const name = `topic "${topic.name}" (${topic.id})`;
  if (!contact) {
    if (topic.default_subscription === 'opt_in') return undefined;
    return `Not sent: the address is not a contact, and ${name} is opt-in only (default_subscription: opt_out).`;
  }
  if (contact.unsubscribed) return 'Not sent: the contact has unsubscribed from all email.';
  const subscription = contact.subscription ?? topic.default_subscription;
  if (subscription === 'opt_in') return undefined;
  if (contact.subscription) return `Not sent: the contact opted out of ${name}.`;
  return `Not sent: the contact has not opted in to ${name} (default_subscription: opt_out).`;
}

/**
 * The topic rules of a send with `topic_id`: every envelope address (to, cc and bcc) is judged on its
 * own. A contact receives the email if it opted in to the topic, or made no choice and the topic's
 * default is opt_in; one that opted out, or unsubscribed from everything, does not. An address that is
 * no contact receives it only if the default is opt_in. An unknown topic is refused.
 */
export async function checkTopic(ctx: Context, topicId: string | undefined, recipients: string[]): Promise<TopicCheck> {
  if (topicId === undefined) return { topicId: null, blocked: new Map() };
  const topic = await findTopic(ctx.db, topicId.toLowerCase());
  if (!topic) throw invalidField('topic_id', `there is no topic with id ${quoted(topicId)}.`);
  return { topicId: topic.id, blocked: await blockedBy(ctx, topic, recipients) };
}

async function blockedBy(ctx: Context, topic: TopicRow, recipients: string[]): Promise<Map<string, string>> {
  const contacts = await findTopicSubscriptions(ctx.db, topic.id, recipients.map((address) => address.toLowerCase()));
  const byEmail = new Map<string, Subscriber>(contacts.map((c) => [c.email, c]));
  const blocked = new Map<string, string>();
  for (const address of recipients) {
    const reason = blockReason(topic, byEmail.get(address.toLowerCase()));
    if (reason) blocked.set(address, reason);
  }
  return blocked;
}

/**
 * The rules again when the email is sent, for mail that waited (scheduled up to 30 days ahead, or
 * queued) while its recipients changed their minds: the topic rules for an email sent on a topic (a
 * topic deleted meanwhile lets nobody through), and for a broadcast's email without one, the contact
 * must not have unsubscribed from everything. Returns the recipients now refused, with the reason.
 */
export async function blockedAtSend(
  ctx: Context,
  email: Pick<EmailTable, 'topic_id' | 'broadcast_id'>,
  recipients: string[],
): Promise<Map<string, string>> {
  if (email.topic_id !== null) {
    const topic = await findTopic(ctx.db, email.topic_id);
    if (topic) return blockedBy(ctx, topic, recipients);
    return new Map(recipients.map((address) => [address, `Not sent: the topic ${email.topic_id} was deleted.`]));
  }
  if (email.broadcast_id === null) return new Map();
  const contacts = await findContactsByEmails(ctx.db, recipients.map((address) => address.toLowerCase()));
  const unsubscribed = new Set(contacts.filter((c) => c.unsubscribed).map((c) => c.email));
  const reason = 'Not sent: the contact has unsubscribed from all email.';
  return new Map(recipients.filter((address) => unsubscribed.has(address.toLowerCase())).map((address) => [address, reason]));
}
