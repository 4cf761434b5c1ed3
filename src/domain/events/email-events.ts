import type { Context } from '../../context.ts';
import { newId } from '../../time/ids.ts';
import * as emails from '../../store/emails.ts';
import type { EventRow, RecipientRow } from '../../store/emails.ts';
import { later, type Tx } from '../../store/db.ts';
import { addMetrics } from '../../store/email-metrics.ts';
import { countsUnique } from '../metrics/metric-names.ts';
import { rollupRows, senderDomain } from '../metrics/rollup.ts';
import { emailEvents, engagementEvents, type EventEmail } from '../webhooks/email-payload.ts';
import { logEvents } from './event-log.ts';

/**
 * Where an email or one of its recipients can stand, lowest rank first. The events one step records are
 * written in rank order, so that the email's last_event (its newest event) is the best of them:
 * "delivered" when anyone got it, a failure only when nobody did.
 */
export const EMAIL_STATES = [
  'queued',
  'scheduled',
  'canceled',
  'failed',
  'suppressed',
  'bounced',
  'delivery_delayed',
  'sent',
  'delivered',
  'opened',
  'clicked',
  'complained',
] as const;

export type EmailState = (typeof EMAIL_STATES)[number];

/** Where a recipient still waits for a delivery attempt. */
export const PENDING_STATES: EmailState[] = ['queued', 'scheduled', 'delivery_delayed'];

/** What one step did to one recipient (or to every recipient, `recipient: null`): its events, in order. */
export interface RecipientEvents {
  recipient: string | null;
  types: EmailState[];
  response: string | null;
}

const rank = (group: RecipientEvents) => EMAIL_STATES.indexOf(group.types.at(-1)!);

/** The event rows of one step, in the order they are written (by rank), with the email's new last_event. */
function plan(emailId: string, groups: RecipientEvents[], at: string): { rows: EventRow[]; lastEvent: EmailState | undefined } {
  const ordered = [...groups].sort((a, b) => rank(a) - rank(b));
  const rows = ordered.flatMap((g) =>
    g.types.map((type) => ({ id: newId(), email_id: emailId, type, recipient: g.recipient, response: g.response, created_at: at, link: null, bot: 0 })),
  );
  return { rows, lastEvent: ordered.at(-1)?.types.at(-1) };
}

/**
 * Records one step of an email in the caller's transaction: its event rows, their counts in the metrics
 * rollup, each recipient's status (its last event of the step), the email's last_event and the webhook
 * events (event-log.ts), together. The only place that writes them.
 */
export async function recordEvents(ctx: Context, tx: Tx, email: EventEmail, groups: RecipientEvents[], at: string): Promise<void> {
  const emailId = email.id;
  const { rows, lastEvent } = plan(emailId, groups, at);
  if (lastEvent === undefined) return;
  // None of these writes' answers is read: on PostgreSQL they go with the transaction's next read or commit.
  const writes = later(tx);
  await emails.insertEvents(writes, rows);
  await addMetrics(writes, rollupRows(email.project_id, senderDomain(email.from), email.broadcast_id, rows));
  await logEvents(ctx, writes, emailEvents(email, rows.map((row) => ({ state: row.type as EmailState, response: row.response }))), at);
  for (const group of groups) {
    const status = group.types.at(-1)!;
    if (group.recipient === null) await emails.setRecipientsStatus(writes, emailId, status);
    // A delay (a transient DSN) arriving after the recipient was delivered or bounced is recorded but
    // leaves it where it stands: pending again, a retry for another recipient would send it a second copy.
    else if (status === 'delivery_delayed') await emails.raiseRecipientStatus(writes, emailId, group.recipient, status, PENDING_STATES);
    else await emails.setRecipientStatus(writes, emailId, group.recipient, status);
  }
  await emails.setLastEvent(writes, emailId, lastEvent);
  countAfterCommit(ctx, tx, rows);
}

/** The events in Prometheus's counter, once they are committed. */
function countAfterCommit(ctx: Context, tx: Tx, rows: EventRow[]): void {
  ctx.writer.afterCommit(tx, () => rows.forEach((row) => ctx.instruments.emailEvents.inc({ event: row.type })));
}

/**
 * What a new email starts as: every recipient at `initial`, then the events already known when it is
 * accepted (a recipient its topic refuses has failed), applied as recordEvents would.
 */
export function startingState(
  emailId: string,
  addresses: string[],
  initial: 'queued' | 'scheduled',
  groups: RecipientEvents[],
  at: string,
): { recipients: RecipientRow[]; events: EventRow[]; lastEvent: EmailState } {
  const { rows, lastEvent } = plan(emailId, groups, at);
  const status = new Map(groups.map((g) => [g.recipient, g.types.at(-1)!]));
  const recipients = addresses.map((address) => ({ email_id: emailId, address, status: status.get(address) ?? initial }));
  // The email stands where its best recipient does: still queued while anyone is.
  return { recipients, events: rows, lastEvent: recipients.some((r) => r.status === initial) ? initial : (lastEvent ?? initial) };
}

/** What a recipient did with an email after it arrived. */
export type EngagementType = 'opened' | 'clicked' | 'unsubscribed';

export interface Engagement {
  type: EngagementType;
  recipient: string;
  /** The link a click followed. */
  link?: string;
  /** Why this looks like a bot (a HEAD request, a scanner's user agent): recorded, flagged, counted nowhere. */
  bot?: string;
  /** The request's client, for the webhook's `click`. */
  client?: { ipAddress: string; userAgent: string };
}

/**
 * Records an open, a click or an unsubscribe of one recipient in the caller's transaction: its event
 * row, and unless a bot made it, its counts in the metrics rollup (the recipient's first open or click
 * is unique too), the webhook event and the recipient's status and the email's last_event, each raised
 * only when the new state ranks higher (an open never hides a complaint).
 */
export async function recordEngagement(ctx: Context, tx: Tx, email: EventEmail & { last_event: string }, engagement: Engagement, at: string): Promise<void> {
  const { type, recipient } = engagement;
  const row: EventRow = { id: newId(), email_id: email.id, type, recipient, response: engagement.bot ?? null, created_at: at, link: engagement.link ?? null, bot: engagement.bot ? 1 : 0 };
  let first = false;
  if (!engagement.bot && countsUnique(type)) {
    // Two first opens at once must not both count as unique: the email's row is locked before looking.
    await emails.lockEmail(tx, email.id);
    first = !(await emails.hasEngaged(tx, email.id, recipient, type));
  }
  await emails.insertEvents(tx, [row]);
  if (engagement.bot) return;
  await addMetrics(tx, rollupRows(email.project_id, senderDomain(email.from), email.broadcast_id, [{ ...row, first }]));
  countAfterCommit(ctx, tx, [row]);
  if (type === 'unsubscribed') return;
  await logEvents(ctx, tx, engagementEvents(email, engagement, at), at);
  await emails.raiseRecipientStatus(tx, email.id, recipient, type, ranksBelow(type));
  if (ranksBelow(type).includes(email.last_event as EmailState)) await emails.setLastEvent(tx, email.id, type);
}

/** The states that `state` outranks. */
const ranksBelow = (state: EmailState): EmailState[] => EMAIL_STATES.slice(0, EMAIL_STATES.indexOf(state));
