// The event log: every state change worth telling an application about is written here, in the
// transaction of the change, with one outbox message (and its delivery job) per enabled endpoint
// subscribed to its type. Nothing else writes events or webhook messages. An event no endpoint is
// subscribed to is not written: every reader reaches events through their messages.
import type { Context } from '../../context.ts';
import { newId } from '../../time/ids.ts';
import type { Db, Tx } from '../../store/db.ts';
import { eventToTable } from '../../store/events.ts';
import { insertTables, type Rows } from '../../store/insert-rows.ts';
import type { WebhookRow } from '../../store/webhooks.ts';
import { jobKey, jobRow } from '../../jobs/enqueue.ts';
import type { WebhookEventType } from '../webhooks/event-types.ts';

export interface NewEvent {
  /** The project whose endpoints hear of it, and only those. */
  project: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** The rows of `events`, their messages to `subscribers` and the messages' delivery jobs. */
export function eventRows(ctx: Context, events: NewEvent[], subscribers: (type: WebhookEventType) => WebhookRow[], at: string): Rows {
  const rows: Required<Pick<Rows, 'events' | 'webhook_messages' | 'jobs'>> = { events: [], webhook_messages: [], jobs: [] };
  for (const event of events) {
    const webhooks = subscribers(event.type).filter((webhook) => webhook.project_id === event.project);
    if (webhooks.length === 0) continue;
    const id = newId();
    rows.events.push(eventToTable({ id, project_id: event.project, type: event.type, created_at: at, data: event.data }));
    for (const webhook of webhooks) {
      const messageId = newId();
      rows.webhook_messages.push({ id: messageId, webhook_id: webhook.id, event_id: id, status: 'pending', next_attempt_at: at, created_at: at });
      rows.jobs.push(jobRow(ctx, 'deliver-webhook', { message_id: messageId }, { key: jobKey('deliver-webhook', messageId) }));
    }
  }
  return rows;
}

/** The rows of `events` for the endpoints subscribed now, to write with other rows (POST /emails). */
export async function subscribedEventRows(ctx: Context, db: Db | Tx, events: NewEvent[], at: string): Promise<Rows> {
  if (events.length === 0) return {};
  const webhooks = await ctx.webhooks.enabled(db);
  return eventRows(ctx, events, (type) => webhooks.filter((w) => w.events.includes(type)), at);
}

/** Records `events` in the caller's transaction; the deliveries it adds wake the workers once it commits. */
export async function logEvents(ctx: Context, tx: Tx, events: NewEvent[], at: string): Promise<void> {
  await insertTables(tx, await subscribedEventRows(ctx, tx, events, at));
}
