// What became of the events sent to an endpoint: its delivery log, each event's attempts, and replay.
import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import * as events from '../../store/events.ts';
import type { PageRequest } from '../../store/paginate.ts';
import { findWebhook } from '../../store/webhooks.ts';
import { jobKey, replace } from '../../jobs/enqueue.ts';

/** What an endpoint is posted for an event: `{type, created_at, data}`, as Resend sends it. */
export function envelopeOf(event: { type: string; created_at: string; data: Record<string, unknown> }) {
  return { type: event.type, created_at: isoTime(event.created_at), data: event.data };
}

async function webhookOrThrow(ctx: Context, project: string, webhookId: string): Promise<void> {
  if (!(await findWebhook(ctx.db, project, webhookId))) throw notFound('Webhook');
}

async function messageOrThrow(ctx: Context, project: string, webhookId: string, eventId: string) {
  await webhookOrThrow(ctx, project, webhookId);
  const message = await events.findEndpointMessage(ctx.db, webhookId, eventId);
  if (!message) throw notFound('Webhook event');
  return message;
}

export async function listWebhookEvents(ctx: Context, project: string, webhookId: string, page: PageRequest) {
  await webhookOrThrow(ctx, project, webhookId);
  return events.listEndpointEvents(ctx.db, webhookId, page);
}

/** One event as this endpoint got it (or will): where it stands, its next try, and the payload itself. */
export async function getWebhookEvent(ctx: Context, project: string, webhookId: string, eventId: string) {
  const message = await messageOrThrow(ctx, project, webhookId, eventId);
  return {
    id: message.event_id,
    type: message.type,
    created_at: message.created_at,
    status: message.status,
    next_attempt_at: message.next_attempt_at,
    payload: envelopeOf(message),
  };
}

export async function listWebhookAttempts(ctx: Context, project: string, webhookId: string, eventId: string, page: PageRequest) {
  const message = await messageOrThrow(ctx, project, webhookId, eventId);
  return events.listAttempts(ctx.db, message.id, page);
}

/**
 * Sends an event to the endpoint again, whether it failed or succeeded: a new attempt now, under the
 * same message id (receivers dedupe on it), with the retry schedule started afresh.
 */
/** Where an email's events went: each webhook message with its endpoint and its attempts (the dashboard's timeline). */
export async function listEmailDeliveries(ctx: Context, emailId: string) {
  const messages = await events.listEmailMessages(ctx.db, emailId);
  const attempts = await events.listMessagesAttempts(ctx.db, messages.map((m) => m.id));
  return messages.map((message) => ({ ...message, attempts: attempts.filter((a) => a.message_id === message.id) }));
}

export async function replayWebhookEvent(ctx: Context, project: string, webhookId: string, eventId: string): Promise<void> {
  const message = await messageOrThrow(ctx, project, webhookId, eventId);
  const now = ctx.clock.now();
  await ctx.writer.transaction(async (tx) => {
    await events.setMessageStatus(tx, message.id, 'pending', toTimestamp(now));
    await replace(ctx, tx, 'deliver-webhook', { message_id: message.id }, { key: jobKey('deliver-webhook', message.id), runAt: now });
  });
}
