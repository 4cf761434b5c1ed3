import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { postWebhook, type PostResult } from '../../delivery/webhook-post.ts';
import { newId } from '../../time/ids.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import type { Tx } from '../../store/db.ts';
import * as events from '../../store/events.ts';
import { updateWebhook, type WebhookRow } from '../../store/webhooks.ts';
import packageJson from '../../../package.json' with { type: 'json' };
import { envelopeOf } from './deliveries.ts';
import { signingSecretOf } from './endpoints.ts';
import { signatureHeaders } from './signature.ts';

const USER_AGENT = `Mailroom/${packageJson.version} (webhooks)`;

/** Resend's schedule: at once, then after each failed attempt these waits; eight attempts in all. */
export const RETRY_AFTER_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A delivery's attempts: the schedule's, and the first. */
export const WEBHOOK_ATTEMPTS = RETRY_AFTER_MS.length + 1;

/** The wait after attempt `attempt` (from 1). */
export const webhookRetryMs = (attempt: number): number => RETRY_AFTER_MS[Math.min(attempt, RETRY_AFTER_MS.length) - 1]!;

const succeeded = (result: PostResult) => result.status !== null && result.status >= 200 && result.status < 300;

/**
 * The `deliver-webhook` task: sends one message of the outbox to its endpoint, signed, and records the
 * attempt with what came of it, with the job's end: done on any 2xx; otherwise retried on the schedule
 * with the same message id, then failed. An endpoint failing every attempt for
 * `webhooks.disableAfterMs` is disabled, saying why.
 */
export async function deliverWebhook(ctx: Context, attempt: Attempt<'deliver-webhook'>): Promise<TaskResult> {
  const message = await events.findMessage(ctx.db, attempt.payload.message_id);
  // Disabled or deleted endpoints are not among the enabled ones: their messages are dropped.
  const webhook = message && (await ctx.webhooks.enabled()).find((w) => w.id === message.webhook_id);
  if (!message || !webhook) return done();

  const body = JSON.stringify(envelopeOf(message));
  const now = ctx.clock.now();
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    // The receiver checks the timestamp against its own clock, so it is the real time, never ctx.clock.
    ...signatureHeaders(signingSecretOf(ctx, webhook), `msg_${message.id}`, Math.floor(Date.now() / 1000), body),
  };
  const result = await postWebhook(webhook.endpoint, body, headers, ctx.config.allowPrivateWebhookUrls);
  const ok = succeeded(result);
  const at = ctx.clock.now();
  const retryAt = ok || attempt.last ? undefined : at + webhookRetryMs(attempt.number);
  const status = ok ? 'success' : retryAt === undefined ? 'failed' : 'attempting';
  const write = async (tx: Tx) => {
    await events.insertAttempt(tx, {
      id: newId(),
      message_id: message.id,
      sent_at: toTimestamp(now),
      http_status_code: result.status,
      error: result.error,
      duration_ms: result.durationMs,
      response: result.response,
    });
    await events.setMessageStatus(tx, message.id, status, retryAt === undefined ? null : toTimestamp(retryAt));
    await updateHealth(ctx, tx, webhook, ok, at);
    ctx.writer.afterCommit(tx, () => ctx.instruments.webhookAttempts.inc({ outcome: status }));
  };
  return retryAt === undefined ? done(write) : { ending: { end: 'retry', error: result.error ?? `HTTP ${result.status}`, at: retryAt }, write };
}

/** Keeps when an endpoint started failing; one that has failed for too long is disabled. */
async function updateHealth(ctx: Context, tx: Tx, webhook: WebhookRow, ok: boolean, at: number): Promise<void> {
  if (ok) {
    if (webhook.failing_since !== null) {
      await updateWebhook(tx, webhook.project_id, webhook.id, { failing_since: null });
      ctx.writer.afterCommit(tx, () => ctx.webhooks.clear());
    }
    return;
  }
  const since = webhook.failing_since ?? at;
  if (at - since < ctx.config.webhooks.disableAfterMs) {
    if (webhook.failing_since === null) {
      await updateWebhook(tx, webhook.project_id, webhook.id, { failing_since: since });
      ctx.writer.afterCommit(tx, () => ctx.webhooks.clear());
    }
    return;
  }
  const days = Math.round(ctx.config.webhooks.disableAfterMs / 86_400_000);
  await updateWebhook(tx, webhook.project_id, webhook.id, { status: 'disabled', disabled_reason: `Every delivery failed for ${days} day${days === 1 ? '' : 's'}, since ${toTimestamp(since)}.` });
  ctx.writer.afterCommit(tx, () => ctx.webhooks.clear());
}
