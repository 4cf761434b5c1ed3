import { sql, type ExpressionBuilder } from 'kysely';
import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { Database } from './schema.ts';

// What a broadcast's recipients did, read from the events of its emails (one email, one recipient
// each). Events a bot made are never read here.

type Scope = ExpressionBuilder<Database, 'emails' | 'email_recipients'>;

/** The non-bot events of `type` of the email in scope to its recipient (a step with no recipient names them all). */
function eventsOf(eb: Scope, type: string) {
  return eb
    .selectFrom('email_events')
    .whereRef('email_events.email_id', '=', 'emails.id')
    .where('email_events.type', '=', type)
    .where('email_events.bot', '=', 0)
    .where((e) => e.or([e('email_events.recipient', 'is', null), e('email_events.recipient', '=', e.ref('email_recipients.address'))]));
}

/**
 * A page of the broadcast's recipients with at least one event of `type`, keyset on their emails' ids
 * (newest first) over the index emails(broadcast_id, id), with the `count` of those events and the
 * `response` of the newest. `address` narrows to one recipient (lowercase).
 */
export async function listRecipientsWithEvent(db: Db, broadcastId: string, type: string, address: string | undefined, page: PageRequest) {
  let query = db
    .selectFrom('emails')
    .innerJoin('email_recipients', 'email_recipients.email_id', 'emails.id')
    .leftJoin('contacts', (join) => join.onRef('contacts.email', '=', 'email_recipients.address').onRef('contacts.project_id', '=', 'emails.project_id'))
    .select((eb) => [
      'emails.id as id',
      'email_recipients.address as email',
      'contacts.id as contact_id',
      eventsOf(eb, type).select((e) => e.fn.countAll<number | string>().as('n')).as('count'),
      eventsOf(eb, type).select('email_events.response').orderBy('email_events.id', 'desc').limit(1).as('response'),
    ])
    .where('emails.broadcast_id', '=', broadcastId)
    .where((eb) => eb.exists(eventsOf(eb, type).select('email_events.id')));
  if (address !== undefined) query = query.where(sql<boolean>`lower(email_recipients.address) = ${address}`);
  const result = await selectPage(query, 'emails.id', page);
  // PostgreSQL counts in bigint, which pg hands over as a string.
  return { has_more: result.has_more, data: result.data.map((row) => ({ ...row, count: Number(row.count) })) };
}

export type RecipientReportRow = Awaited<ReturnType<typeof listRecipientsWithEvent>>['data'][number];

/** The non-bot clicks of each of these emails, by link. */
export async function countClicksByLink(db: Db, emailIds: string[]): Promise<{ email_id: string; link: string; clicks: number }[]> {
  if (emailIds.length === 0) return [];
  const rows = await db
    .selectFrom('email_events')
    .select((eb) => ['email_id', 'link', eb.fn.countAll<number | string>().as('clicks')])
    .where('email_id', 'in', emailIds)
    .where('type', '=', 'clicked')
    .where('bot', '=', 0)
    .where('link', 'is not', null)
    .groupBy(['email_id', 'link'])
    .execute();
  // PostgreSQL counts in bigint, which pg hands over as a string.
  return rows.map((row) => ({ email_id: row.email_id, link: row.link!, clicks: Number(row.clicks) }));
}

/** Where a link stands in the list of clicked links: its clicks, and the id of its first click. */
export interface LinkKey {
  clicks: number;
  first: string;
}

export interface ClickedLinkRow extends LinkKey {
  url: string;
  unique_clicks: number;
}

/**
 * A page of the links clicked in the broadcast's emails (non-bot clicks), most clicked first, then the
 * one first clicked earlier: a link's first click never changes, so the pair is a keyset. Every page
 * groups all of the broadcast's clicks: the order is by their counts.
 */
export async function listClickedLinks(
  db: Db,
  broadcastId: string,
  page: { limit: number; after?: LinkKey; before?: LinkKey },
): Promise<{ has_more: boolean; data: ClickedLinkRow[] }> {
  const clicks = sql<number>`count(*)`;
  const first = sql<string>`min(email_events.id)`;
  let query = db
    .selectFrom('email_events')
    .innerJoin('emails', 'emails.id', 'email_events.email_id')
    .select([
      'email_events.link as url',
      clicks.as('clicks'),
      sql<number>`count(distinct email_events.email_id)`.as('unique_clicks'),
      first.as('first'),
    ])
    .where('emails.broadcast_id', '=', broadcastId)
    .where('email_events.type', '=', 'clicked')
    .where('email_events.bot', '=', 0)
    .where('email_events.link', 'is not', null)
    .groupBy('email_events.link');
  const { after, before } = page;
  if (after) query = query.having(sql<boolean>`count(*) < ${after.clicks} or (count(*) = ${after.clicks} and min(email_events.id) > ${after.first})`);
  if (before) query = query.having(sql<boolean>`count(*) > ${before.clicks} or (count(*) = ${before.clicks} and min(email_events.id) < ${before.first})`);
  const rows = await (before ? query.orderBy(clicks, 'asc').orderBy(first, 'desc') : query.orderBy(clicks, 'desc').orderBy(first, 'asc'))
    .limit(page.limit + 1)
    .execute();
  const has_more = rows.length > page.limit;
  if (has_more) rows.pop();
  if (before) rows.reverse();
  return {
    has_more,
    data: rows.map((row) => ({ url: row.url!, clicks: Number(row.clicks), unique_clicks: Number(row.unique_clicks), first: row.first })),
  };
}

/** The id of the broadcast's email to `address`, if it wrote one. */
export async function findBroadcastEmailTo(db: Db | Tx, broadcastId: string, address: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('emails')
    .innerJoin('email_recipients', 'email_recipients.email_id', 'emails.id')
    .select('emails.id')
    .where('emails.broadcast_id', '=', broadcastId)
    .where('email_recipients.address', '=', address)
    .executeTakeFirst();
  return row?.id;
}

/** How many emails the broadcast wrote: one per recipient its fan-out took. */
export async function countBroadcastEmails(db: Db, broadcastId: string): Promise<number> {
  const row = await db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('broadcast_id', '=', broadcastId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
