import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, notFound } from '../../errors.ts';
import { findBroadcastEmailTo } from '../../store/broadcast-reports.ts';
import { findContactById, findContactInAnyProject, updateContact, type ContactRow } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { findEmailById } from '../../store/emails.ts';
import { allRows } from '../../store/paginate.ts';
import { findTopic, listContactTopics, setSubscriptions } from '../../store/topics.ts';
import { contactEvent, topicsEvent } from '../contacts/contact-events.ts';
import { recordEngagement } from '../events/email-events.ts';
import { logEvents } from '../events/event-log.ts';
import { readUnsubscribeToken, unsubscribeKey, type UnsubscribeClaims } from './unsubscribe-tokens.ts';

// The unsubscribe link of a broadcast email: a page of the contact's choices, and the POST that
// changes them, from the page's forms or from a mail client's RFC 8058 one-click request. The signed
// token is the only credential: no API key.

/** The fields a POST to the link may carry (urlencoded or multipart). */
export interface UnsubscribeForm {
  /** RFC 8058: `List-Unsubscribe=One-Click`. */
  'List-Unsubscribe'?: string;
  /** The page's form for one topic. */
  topic_id?: string;
  /** The page's form for everything. */
  everything?: string;
}

export interface Preferences {
  email: string;
  unsubscribed: boolean;
  /** Public topics, and the private ones the contact receives; oldest first. */
  topics: { id: string; name: string; description: string | null; subscribed: boolean }[];
  /** What the request just changed, in words. */
  done: string | undefined;
}

async function readLink(ctx: Context, token: string): Promise<{ claims: UnsubscribeClaims; contact: ContactRow }> {
  const claims = readUnsubscribeToken(unsubscribeKey(ctx.secret), token);
  const contact = claims && (await findContactInAnyProject(ctx.db, claims.contactId));
  if (!claims || !contact) throw new AppError('not_found', 'This unsubscribe link is not valid, or its contact no longer exists.');
  return { claims, contact };
}

/** The topics the page shows a contact: the public ones, and the private ones it receives; oldest first. */
async function shownTopics(ctx: Context, contact: ContactRow): Promise<Preferences['topics']> {
  const all = await allRows(await listContactTopics(ctx.db, contact.project_id, contact.id, { limit: undefined, after: undefined, before: undefined }));
  return all
    .filter((topic) => topic.visibility === 'public' || topic.subscription === 'opt_in')
    .reverse()
    .map((topic) => ({ id: topic.id, name: topic.name, description: topic.description, subscribed: topic.subscription === 'opt_in' }));
}

async function preferencesOf(ctx: Context, contact: ContactRow, done?: string): Promise<Preferences> {
  return { email: contact.email, unsubscribed: contact.unsubscribed === 1, topics: await shownTopics(ctx, contact), done };
}

/** GET /unsubscribe/:token: the contact's choices. */
export async function getPreferences(ctx: Context, token: string): Promise<Preferences> {
  return preferencesOf(ctx, (await readLink(ctx, token)).contact);
}

/**
 * The unsubscribe as an event of the link's broadcast email to the contact, in the transaction of the
 * change, so that the broadcast's recipients list it (none when the contact's address has changed since).
 */
async function recordUnsubscribed(ctx: Context, tx: Tx, claims: UnsubscribeClaims, contact: ContactRow, at: string): Promise<void> {
  const emailId = await findBroadcastEmailTo(tx, claims.broadcastId, contact.email);
  const email = emailId === undefined ? undefined : await findEmailById(tx, emailId);
  if (email) await recordEngagement(ctx, tx, email, { type: 'unsubscribed', recipient: contact.email }, at);
}

async function leaveTopic(ctx: Context, claims: UnsubscribeClaims, contact: ContactRow, topicId: string): Promise<string | undefined> {
  const topic = await findTopic(ctx.db, contact.project_id, topicId.toLowerCase());
  if (!topic) return undefined;
  await ctx.writer.transaction(async (tx) => {
    const at = toTimestamp(ctx.clock.now());
    const change = { topic_id: topic.id, subscription: 'opt_out' as const };
    await setSubscriptions(tx, [{ contact_id: contact.id, ...change }]);
    await logEvents(ctx, tx, [topicsEvent(contact, [change])], at);
    await recordUnsubscribed(ctx, tx, claims, contact, at);
  });
  return `You will no longer receive ${topic.name}.`;
}

/**
 * Unsubscribes a contact from everything in the caller's transaction, with its contact.updated event:
 * the unsubscribe link's "everything", and a complaint (bounces/reports.ts).
 */
export async function unsubscribeContact(ctx: Context, tx: Tx, contact: ContactRow, at: string): Promise<void> {
  await updateContact(tx, contact.project_id, contact.id, { unsubscribed: 1 });
  await logEvents(ctx, tx, [await contactEvent(tx, 'contact.updated', { ...contact, unsubscribed: 1 }, at)], at);
}

async function leaveEverything(ctx: Context, claims: UnsubscribeClaims, contact: ContactRow): Promise<string> {
  await ctx.writer.transaction(async (tx) => {
    const at = toTimestamp(ctx.clock.now());
    await unsubscribeContact(ctx, tx, contact, at);
    await recordUnsubscribed(ctx, tx, claims, contact, at);
  });
  return 'You will no longer receive any of these emails.';
}

/**
 * POST /unsubscribe/:token. One-click leaves the topic the email was sent on, or everything when it
 * had none; the page's forms leave the topic they name, or everything. A topic deleted meanwhile
 * sends nothing any more: there is nothing to change.
 */
export async function unsubscribe(ctx: Context, token: string, form: UnsubscribeForm): Promise<Preferences> {
  const { claims, contact } = await readLink(ctx, token);
  let done: string | undefined;
  if (form['List-Unsubscribe'] === 'One-Click') {
    done = claims.topicId === null ? await leaveEverything(ctx, claims, contact) : await leaveTopic(ctx, claims, contact, claims.topicId);
  } else if (form.topic_id !== undefined) {
    // The page's forms leave only the topics the page shows: a private topic the contact does not
    // receive is not the link's to change.
    const shown = (await shownTopics(ctx, contact)).some((topic) => topic.id === form.topic_id!.toLowerCase());
    done = shown ? await leaveTopic(ctx, claims, contact, form.topic_id) : undefined;
    if (done === undefined) throw notFound('Topic');
  } else if (form.everything !== undefined) {
    done = await leaveEverything(ctx, claims, contact);
  } else {
    throw new AppError('malformed_request', 'Choose a topic to leave, or everything.');
  }
  return preferencesOf(ctx, (await findContactById(ctx.db, contact.project_id, contact.id)) ?? contact, done ?? 'There was nothing to change.');
}
