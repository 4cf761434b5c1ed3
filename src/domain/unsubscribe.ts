import type { Context } from '../context.ts';
import { AppError, notFound } from '../http/errors.ts';
import { findContactById, updateContact, type ContactRow } from '../store/contacts.ts';
import { allRows } from '../store/paginate.ts';
import { findTopic, listContactTopics, setSubscriptions } from '../store/topics.ts';
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
  const contact = claims && (await findContactById(ctx.db, claims.contactId));
  if (!claims || !contact) throw new AppError('not_found', 'This unsubscribe link is not valid, or its contact no longer exists.');
  return { claims, contact };
}

async function preferencesOf(ctx: Context, contact: ContactRow, done?: string): Promise<Preferences> {
  const all = await allRows(await listContactTopics(ctx.db, contact.id, { limit: undefined, after: undefined, before: undefined }));
  const topics = all
    .filter((topic) => topic.visibility === 'public' || topic.subscription === 'opt_in')
    .reverse()
    .map((topic) => ({ id: topic.id, name: topic.name, description: topic.description, subscribed: topic.subscription === 'opt_in' }));
  return { email: contact.email, unsubscribed: contact.unsubscribed === 1, topics, done };
}

/** GET /unsubscribe/:token: the contact's choices. */
export async function getPreferences(ctx: Context, token: string): Promise<Preferences> {
  return preferencesOf(ctx, (await readLink(ctx, token)).contact);
}

async function leaveTopic(ctx: Context, contact: ContactRow, topicId: string): Promise<string | undefined> {
  const topic = await findTopic(ctx.db, topicId.toLowerCase());
  if (!topic) return undefined;
  await ctx.writer.transaction((tx) => setSubscriptions(tx, [{ contact_id: contact.id, topic_id: topic.id, subscription: 'opt_out' }]));
  return `You will no longer receive ${topic.name}.`;
}

async function leaveEverything(ctx: Context, contact: ContactRow): Promise<string> {
  await ctx.writer.transaction((tx) => updateContact(tx, contact.id, { unsubscribed: 1 }));
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
    done = claims.topicId === null ? await leaveEverything(ctx, contact) : await leaveTopic(ctx, contact, claims.topicId);
  } else if (form.topic_id !== undefined) {
    done = await leaveTopic(ctx, contact, form.topic_id);
    if (done === undefined) throw notFound('Topic');
  } else if (form.everything !== undefined) {
    done = await leaveEverything(ctx, contact);
  } else {
    throw new AppError('malformed_request', 'Choose a topic to leave, or everything.');
  }
  return preferencesOf(ctx, (await findContactById(ctx.db, contact.id)) ?? contact, done ?? 'There was nothing to change.');
}
