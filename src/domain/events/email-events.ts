import type { Context } from '../../context.ts';
import { newId } from '../../ids.ts';
import * as emails from '../../store/emails.ts';
import type { EventRow, RecipientRow } from '../../store/emails.ts';
import type { Tx } from '../../store/db.ts';
import { emailEvents, type EventEmail } from '../webhooks/email-payload.ts';
import { logEvents } from './event-log.ts';

/**
 * Where an email or one of its recipients can stand, lowest rank first. The events one step records are
 * written in rank order, so that the email's last_event (its newest event) is the best of them:
 * "delivered" when anyone got it, a failure only when nobody did.
 */
export const EMAIL_STATES = ['queued', 'scheduled', 'canceled', 'failed', 'suppressed', 'bounced', 'delivery_delayed', 'sent', 'delivered', 'complained'] as const;

export type EmailState = (typeof EMAIL_STATES)[number];

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
  const rows = ordered.flatMap((g) => g.types.map((type) => ({ id: newId(), email_id: emailId, type, recipient: g.recipient, response: g.response, created_at: at })));
  return { rows, lastEvent: ordered.at(-1)?.types.at(-1) };
}

/**
 * Records one step of an email in the caller's transaction: its event rows, each recipient's status (its
 * last event of the step), the email's last_event and the webhook events (event-log.ts), together. The
 * only place that writes them.
 */
export async function recordEvents(ctx: Context, tx: Tx, email: EventEmail, groups: RecipientEvents[], at: string): Promise<void> {
  const emailId = email.id;
  const { rows, lastEvent } = plan(emailId, groups, at);
  if (lastEvent === undefined) return;
  await emails.insertEvents(tx, rows);
  await logEvents(ctx, tx, emailEvents(email, rows.map((row) => ({ state: row.type as EmailState, response: row.response }))), at);
  for (const group of groups) {
    const status = group.types.at(-1)!;
    if (group.recipient === null) await emails.setRecipientsStatus(tx, emailId, status);
    else await emails.setRecipientStatus(tx, emailId, group.recipient, status);
  }
  await emails.setLastEvent(tx, emailId, lastEvent);
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
