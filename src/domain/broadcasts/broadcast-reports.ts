import type { Context } from '../../context.ts';
import { bounceOf } from '../outcomes/outcomes.ts';
import { AppError, invalidField, missingField, notFound, quoted } from '../../errors.ts';
import { isUuid } from '../../time/ids.ts';
import * as reports from '../../store/broadcast-reports.ts';
import { findBroadcast } from '../../store/broadcasts.ts';
import type { PageRequest } from '../../store/paginate.ts';

// What a broadcast's recipients did with it (GET /broadcasts/:id/recipients and /clicked-links), read
// from the events of its emails, one email per recipient. Events a bot made count nowhere.

export const RECIPIENT_EVENT_TYPES = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'] as const;
export type RecipientEventType = (typeof RECIPIENT_EVENT_TYPES)[number];

export const BOUNCE_TYPES = ['permanent', 'transient', 'undetermined'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

export interface RecipientsQuery {
  type?: string;
  email?: string;
  bounce_type?: string;
}

export interface BroadcastRecipient {
  /** The id of the recipient's email: the cursor of this list. */
  id: string;
  contact_id: string | null;
  email: string;
  count?: number;
  bounce_type?: BounceType;
  clicked_links?: { url: string; clicks: number }[];
}

async function checkExists(ctx: Context, project: string, id: string): Promise<string> {
  const row = await findBroadcast(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('Broadcast');
  return row.id;
}

const oneOf = (values: readonly string[]) => values.map((v) => `\`${v}\``).join(', ');

function checkQuery(query: RecipientsQuery): { type: RecipientEventType; bounceType: BounceType | undefined } {
  const { type, bounce_type: bounceType } = query;
  if (type === undefined) throw missingField('type');
  if (!(RECIPIENT_EVENT_TYPES as readonly string[]).includes(type)) throw invalidField('type', `${quoted(type)} must be one of ${oneOf(RECIPIENT_EVENT_TYPES)}.`);
  if (bounceType !== undefined) {
    if (type !== 'bounced') throw invalidField('bounce_type', 'can only be used with `type` `bounced`.');
    if (!(BOUNCE_TYPES as readonly string[]).includes(bounceType)) throw invalidField('bounce_type', `${quoted(bounceType)} must be one of ${oneOf(BOUNCE_TYPES)}.`);
  }
  return { type: type as RecipientEventType, bounceType: bounceType as BounceType | undefined };
}

const bounceTypeOf = (response: string | null | undefined) => bounceOf(response ?? '').type.toLowerCase() as BounceType;

/** Rows read per query while a page of one bounce type is gathered: the type is read from each answer here, not in SQL. */
const BOUNCE_SCAN = 100;

/**
 * A page of the broadcast's bounced recipients of one bounce type: bounced rows are read in list order,
 * BOUNCE_SCAN at a time in the page's direction, and kept when their answer is of that type, until the
 * page is full and one more is known (has_more), or the list ends.
 */
async function bouncedOfType(ctx: Context, broadcastId: string, bounceType: BounceType, address: string | undefined, page: PageRequest) {
  const limit = page.limit!;
  const backwards = page.before !== undefined;
  let cursor = backwards ? page.before : page.after;
  const kept: reports.RecipientReportRow[] = [];
  for (;;) {
    const scan = { limit: BOUNCE_SCAN, after: backwards ? undefined : cursor, before: backwards ? cursor : undefined };
    const batch = await reports.listRecipientsWithEvent(ctx.db, broadcastId, 'bounced', address, scan);
    const matching = batch.data.filter((row) => bounceTypeOf(row.response) === bounceType);
    // Walking back, rows nearer the cursor come last: a batch's matches go in front of those kept.
    if (backwards) kept.unshift(...matching);
    else kept.push(...matching);
    if (kept.length > limit || !batch.has_more || batch.data.length === 0) break;
    cursor = backwards ? batch.data[0]!.id : batch.data.at(-1)!.id;
  }
  const has_more = kept.length > limit;
  return { has_more, data: backwards ? kept.slice(-limit) : kept.slice(0, limit) };
}

/**
 * GET /broadcasts/:id/recipients: the recipients with at least one event of `type`, newest email
 * first; with `count` of those events (opened, clicked), the links clicked (clicked), the bounce's
 * type (bounced). `email` narrows to one address; `bounce_type` to one type of bounce.
 */
export async function listBroadcastRecipients(ctx: Context, project: string, id: string, query: RecipientsQuery, page: PageRequest) {
  const { type, bounceType } = checkQuery(query);
  const broadcastId = await checkExists(ctx, project, id);
  const address = query.email?.trim().toLowerCase();
  const counted = type === 'opened' || type === 'clicked';
  const result =
    bounceType === undefined
      ? await reports.listRecipientsWithEvent(ctx.db, broadcastId, type, address, page)
      : await bouncedOfType(ctx, broadcastId, bounceType, address, page);
  const links = type === 'clicked' ? await reports.countClicksByLink(ctx.db, result.data.map((row) => row.id)) : [];
  const data: BroadcastRecipient[] = result.data.map((row) => ({
    id: row.id,
    contact_id: row.contact_id,
    email: row.email,
    ...(counted ? { count: row.count } : {}),
    ...(type === 'bounced' ? { bounce_type: bounceTypeOf(row.response) } : {}),
    ...(type === 'clicked' ? { clicked_links: clickedLinks(links.filter((link) => link.email_id === row.id)) } : {}),
  }));
  return { has_more: result.has_more, data };
}

/** One recipient's links: most clicked first, then by url. */
function clickedLinks(rows: { link: string; clicks: number }[]): { url: string; clicks: number }[] {
  return rows.map((row) => ({ url: row.link, clicks: row.clicks })).sort((a, b) => b.clicks - a.clicks || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

// A clicked link's cursor: its place in the list (clicks, first click), base64url-encoded. It names no entity.
const encodeLinkCursor = (key: reports.LinkKey) => Buffer.from(`${key.clicks}.${key.first}`).toString('base64url');

function decodeLinkCursor(name: 'after' | 'before', cursor: string | undefined): reports.LinkKey | undefined {
  if (cursor === undefined) return undefined;
  const [clicks, first, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  if (!/^\d{1,15}$/.test(clicks ?? '') || !first || !isUuid(first) || extra !== undefined) {
    throw new AppError('validation_error', `The \`${name}\` parameter must be the \`id\` of an item of this list.`);
  }
  return { clicks: Number(clicks), first: first.toLowerCase() };
}

/**
 * GET /broadcasts/:id/clicked-links: each link clicked in the broadcast's emails, with its clicks and
 * the recipients who clicked it; most clicked first, then the link clicked first earlier.
 */
export async function listBroadcastClickedLinks(ctx: Context, project: string, id: string, page: PageRequest) {
  const after = decodeLinkCursor('after', page.after);
  const before = decodeLinkCursor('before', page.before);
  const broadcastId = await checkExists(ctx, project, id);
  const result = await reports.listClickedLinks(ctx.db, broadcastId, { limit: page.limit!, after, before });
  return {
    has_more: result.has_more,
    data: result.data.map((row) => ({ id: encodeLinkCursor(row), url: row.url, clicks: row.clicks, unique_clicks: row.unique_clicks })),
  };
}
