// Who may receive an email: the one place that decides, in two forms that must agree. The per-email
// check judges the addresses of a send (single, batch, and each email again when it goes out); the
// SQL condition picks a broadcast's recipients from a segment in one statement.
//
// The rules: an address on the suppression list receives nothing (suppressed@resend.dev is always on
// it, as a bounce, as in Resend), and records `suppressed`. A contact unsubscribed from everything
// receives no email sent on a topic or as a broadcast. On a topic, a contact receives it if it opted
// in, or made no choice and the topic's default is opt_in; an address that is no contact receives it
// only if the default is opt_in. A recipient these refuse records `failed`.
//
// The suppression list is read when each email goes out, the one step every send (single, batch, with
// a template, a broadcast's) passes, and by an automation's send step before it writes its email
// (refusedToContact); never when a send is accepted: there it cost POST /emails a quarter of its
// throughput and more (docs/decisions.md). Nor is it in the fan-out's SQL: a broadcast's email to a
// suppressed contact is written and recorded suppressed when it goes out, as Resend shows such an
// email (email.suppressed with its broadcast_id).
import { sql } from 'kysely';
import type { Context } from '../../context.ts';
import { invalidField, quoted } from '../../errors.ts';
import { findContactsByEmails } from '../../store/contacts.ts';
import type { Db, Tx } from '../../store/db.ts';
import type { EmailTable, TopicTable } from '../../store/schema.ts';
import { findSuppressedEmails } from '../../store/suppressions.ts';
import { findTopic, findTopicSubscriptions, type TopicRow } from '../../store/topics.ts';
import { suppressedMessage } from '../suppressions/suppressed-messages.ts';

type Topic = Pick<TopicTable, 'id' | 'default_subscription'>;

export interface TopicCheck {
  topicId: string | null;
  /** Recipients the topic does not allow, each with the reason recorded on its `failed` event. */
  blocked: Map<string, string>;
}

/** Why a recipient is not sent to: the state its event records, and the reason kept with it. */
export interface Refusal {
  state: 'failed' | 'suppressed';
  reason: string;
}

interface Subscriber {
  unsubscribed: number;
  subscription: string | null;
}

const UNSUBSCRIBED = 'Not sent: the contact has unsubscribed from all email.';

function blockReason(topic: TopicRow, contact: Subscriber | undefined): string | undefined {
  const name = `topic "${topic.name}" (${topic.id})`;
  if (!contact) {
    if (topic.default_subscription === 'opt_in') return undefined;
    return `Not sent: the address is not a contact, and ${name} is opt-in only (default_subscription: opt_out).`;
  }
  if (contact.unsubscribed) return UNSUBSCRIBED;
  const subscription = contact.subscription ?? topic.default_subscription;
  if (subscription === 'opt_in') return undefined;
  if (contact.subscription) return `Not sent: the contact opted out of ${name}.`;
  return `Not sent: the contact has not opted in to ${name} (default_subscription: opt_out).`;
}

/**
 * The rules of a send with `topic_id`: every envelope address (to, cc and bcc) is judged on its own.
 * An unknown topic is refused.
 */
export async function topicRefusals(ctx: Context, project: string, topicId: string | undefined, recipients: string[]): Promise<TopicCheck> {
  if (topicId === undefined) return { topicId: null, blocked: new Map() };
  const topic = await findTopic(ctx.db, project, topicId.toLowerCase());
  if (!topic) throw invalidField('topic_id', `there is no topic with id ${quoted(topicId)}.`);
  return { topicId: topic.id, blocked: await blockedBy(ctx, topic, recipients) };
}

async function blockedBy(ctx: Context, topic: TopicRow, recipients: string[]): Promise<Map<string, string>> {
  const contacts = await findTopicSubscriptions(ctx.db, topic.project_id, topic.id, recipients.map((address) => address.toLowerCase()));
  const byEmail = new Map<string, Subscriber>(contacts.map((c) => [c.email, c]));
  const blocked = new Map<string, string>();
  for (const address of recipients) {
    const reason = blockReason(topic, byEmail.get(address.toLowerCase()));
    if (reason) blocked.set(address, reason);
  }
  return blocked;
}

/** Resend's test address that is always on the suppression list, as a bounce; it has no `+label` variants. */
const SUPPRESSED_TEST_ADDRESS = 'suppressed@resend.dev';

/** The recipients on the project's suppression list (compared without case), each with its entry's message. */
async function suppressed(ctx: Context, project: string, recipients: string[]): Promise<Map<string, Refusal>> {
  const entries = await findSuppressedEmails(ctx.db, project, recipients.map((address) => address.toLowerCase()));
  const origins = new Map(entries.map((entry) => [entry.email, entry.origin]));
  const refused = new Map<string, Refusal>();
  for (const address of recipients) {
    const key = address.toLowerCase();
    const origin = origins.get(key) ?? (key === SUPPRESSED_TEST_ADDRESS ? 'bounce' : undefined);
    if (origin) refused.set(address, { state: 'suppressed', reason: suppressedMessage(origin) });
  }
  return refused;
}

/**
 * The rules when the email is sent: the suppression list for every email, then, for mail that waited
 * (scheduled up to 30 days ahead, or queued) while its recipients changed their minds, the topic rules
 * for an email sent on a topic (a topic deleted meanwhile lets nobody through), and for a broadcast's
 * email without one, whether the contact has unsubscribed from everything. Returns the recipients
 * refused, each with its state and reason.
 */
export async function refusedAtSend(
  ctx: Context,
  email: Pick<EmailTable, 'project_id' | 'topic_id' | 'broadcast_id'>,
  recipients: string[],
): Promise<Map<string, Refusal>> {
  const refused = await suppressed(ctx, email.project_id, recipients);
  const rest = recipients.filter((address) => !refused.has(address));
  for (const [address, reason] of await blockedAtSend(ctx, email, rest)) refused.set(address, { state: 'failed', reason });
  return refused;
}

/**
 * The rules for an automation's email to one of its contacts, judged when its step runs, in the
 * contact's project: the suppression list; then, on a topic, the topic's rules; without one, a contact
 * unsubscribed from everything receives nothing (as for a broadcast). Undefined when it may be sent.
 */
export async function refusedToContact(
  ctx: Context,
  contact: { project_id: string; email: string; unsubscribed: boolean },
  topicId: string | undefined,
): Promise<Refusal | undefined> {
  const refusal = (await suppressed(ctx, contact.project_id, [contact.email])).get(contact.email);
  if (refusal) return refusal;
  if (topicId !== undefined) {
    const topic = await findTopic(ctx.db, contact.project_id, topicId.toLowerCase());
    const reason = topic ? (await blockedBy(ctx, topic, [contact.email])).get(contact.email) : `Not sent: there is no topic ${topicId}.`;
    return reason === undefined ? undefined : { state: 'failed', reason };
  }
  return contact.unsubscribed ? { state: 'failed', reason: UNSUBSCRIBED } : undefined;
}

async function blockedAtSend(
  ctx: Context,
  email: Pick<EmailTable, 'project_id' | 'topic_id' | 'broadcast_id'>,
  recipients: string[],
): Promise<Map<string, string>> {
  if (email.topic_id !== null) {
    const topic = await findTopic(ctx.db, email.project_id, email.topic_id);
    if (topic) return blockedBy(ctx, topic, recipients);
    return new Map(recipients.map((address) => [address, `Not sent: the topic ${email.topic_id} was deleted.`]));
  }
  if (email.broadcast_id === null) return new Map();
  const contacts = await findContactsByEmails(ctx.db, email.project_id, recipients.map((address) => address.toLowerCase()));
  const unsubscribed = new Set(contacts.filter((c) => c.unsubscribed).map((c) => c.email));
  return new Map(recipients.filter((address) => unsubscribed.has(address.toLowerCase())).map((address) => [address, UNSUBSCRIBED]));
}

/**
 * The same rules as SQL: the contact ids of a segment that may receive a broadcast (on `topic`, if it
 * has one), the broadcast's project's contacts only, with the broadcast's id beside each, for the fan-out's snapshot.
 */
export function eligibleRecipients(db: Db | Tx, project: string, broadcastId: string, segmentId: string, topic: Topic | undefined) {
  const members = db
    .selectFrom('segment_contacts')
    .innerJoin('contacts', 'contacts.id', 'segment_contacts.contact_id')
    .select(['segment_contacts.contact_id', sql<string>`cast(${broadcastId} as text)`.as('broadcast_id')])
    .where('segment_contacts.segment_id', '=', segmentId)
    .where('contacts.project_id', '=', project)
    .where('contacts.unsubscribed', '=', 0);
  if (!topic) return members;
  return members
    .leftJoin('contact_topics', (join) =>
      join.onRef('contact_topics.contact_id', '=', 'segment_contacts.contact_id').on('contact_topics.topic_id', '=', topic.id),
    )
    .where((eb) => eb.fn.coalesce('contact_topics.subscription', eb.val(topic.default_subscription)), '=', 'opt_in');
}
