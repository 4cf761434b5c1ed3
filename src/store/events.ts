import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { EventTable, WebhookAttemptTable, WebhookMessageStatus } from './schema.ts';

/** An event as the code uses it: its payload's `data` parsed. */
export interface EventRow extends Omit<EventTable, 'data' | 'email_id'> {
  data: Record<string, unknown>;
}

export type AttemptRow = WebhookAttemptTable;

export const eventToTable = (event: EventRow): EventTable => ({
  ...event,
  data: JSON.stringify(event.data),
  email_id: typeof event.data.email_id === 'string' ? event.data.email_id : null,
});

/** Outbox messages with their events. */
function messagesWithEvents(db: Db | Tx) {
  return db
    .selectFrom('webhook_messages')
    .innerJoin('events', 'events.id', 'webhook_messages.event_id')
    .select(['webhook_messages.id', 'webhook_messages.webhook_id', 'webhook_messages.status', 'webhook_messages.next_attempt_at', 'events.id as event_id', 'events.type', 'events.created_at', 'events.data']);
}

type MessageQuery = ReturnType<typeof messagesWithEvents>;

async function firstMessage(query: MessageQuery) {
  const row = await query.executeTakeFirst();
  return row && { ...row, data: JSON.parse(row.data) as Record<string, unknown> };
}

/** A message with its event, as a delivery needs them. */
export const findMessage = (db: Db | Tx, id: string) => firstMessage(messagesWithEvents(db).where('webhook_messages.id', '=', id));

/** The message of `eventId` for one endpoint, with its event. */
export const findEndpointMessage = (db: Db, webhookId: string, eventId: string) =>
  firstMessage(messagesWithEvents(db).where('webhook_messages.webhook_id', '=', webhookId).where('webhook_messages.event_id', '=', eventId));

/** The events sent (or being sent) to one endpoint, newest first, with where each stands. */
export async function listEndpointEvents(db: Db, webhookId: string, page: PageRequest) {
  const query = db
    .selectFrom('webhook_messages')
    .innerJoin('events', 'events.id', 'webhook_messages.event_id')
    .select(['webhook_messages.event_id as id', 'events.type', 'events.created_at', 'webhook_messages.status'])
    .where('webhook_messages.webhook_id', '=', webhookId);
  return selectPage(query, 'webhook_messages.event_id', page);
}

export async function setMessageStatus(tx: Db | Tx, id: string, status: WebhookMessageStatus, nextAttemptAt: string | null): Promise<void> {
  await tx.updateTable('webhook_messages').set({ status, next_attempt_at: nextAttemptAt }).where('id', '=', id).execute();
}

export async function insertAttempt(tx: Db | Tx, attempt: AttemptRow): Promise<void> {
  await tx.insertInto('webhook_attempts').values(attempt).execute();
}

/** The webhook messages of an email's events, oldest first, with the endpoint each went to. */
export async function listEmailMessages(db: Db, emailId: string) {
  return db
    .selectFrom('events')
    .innerJoin('webhook_messages', 'webhook_messages.event_id', 'events.id')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_messages.webhook_id')
    .select(['webhook_messages.id', 'webhook_messages.webhook_id', 'webhooks.endpoint', 'events.id as event_id', 'events.type', 'webhook_messages.status'])
    .where('events.email_id', '=', emailId)
    .orderBy('events.id')
    .orderBy('webhook_messages.id')
    .execute();
}

/** The attempts of several messages, oldest first. */
export async function listMessagesAttempts(db: Db, messageIds: string[]) {
  if (messageIds.length === 0) return [];
  return db.selectFrom('webhook_attempts').selectAll().where('message_id', 'in', messageIds).orderBy('id').execute();
}

export async function listAttempts(db: Db, messageId: string, page: PageRequest) {
  return selectPage(db.selectFrom('webhook_attempts').selectAll().where('message_id', '=', messageId), 'id', page);
}
