import { randomBytes } from 'node:crypto';
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { seal, unseal } from '../../secrets/encryption.ts';
import { invalidField, notFound, quoted } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import type { WebhookStatus } from '../../store/schema.ts';
import * as store from '../../store/webhooks.ts';
import { checkEndpointUrl } from './endpoint-url.ts';
import { isWebhookEventType } from './event-types.ts';

// Webhook endpoints: where events are posted, which types each receives, and the secret their
// deliveries are signed with (Standard Webhooks: `whsec_` and base64 of the key). The secret is stored
// sealed with MAILROOM_SECRET to its webhook's id (encryption.ts), as DKIM keys are.

export interface CreateWebhookInput {
  endpoint: string;
  events: string[];
}

export interface UpdateWebhookInput {
  endpoint?: string;
  events?: string[];
  status?: string;
}

const PURPOSE = 'webhook-signing-secret';
const STATUSES: WebhookStatus[] = ['enabled', 'disabled'];

/** A fresh secret: `whsec_` and 24 random bytes in base64, as Resend's (Svix's) look. */
const newSigningSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

const sealed = (ctx: Context, webhookId: string, secret: string): string => seal(ctx.secret, PURPOSE, webhookId, secret);

/** The webhook's signing secret in the clear, for its deliveries and for GET. */
// Unsealing costs a key derivation: each sealed secret is opened once per process (a rotated one is a
// new sealed text). Bounded, as endpoints are few.
const opened = new Map<string, string>();

export function signingSecretOf(ctx: Context, row: Pick<store.WebhookRow, 'id' | 'signing_secret'>): string {
  // Keyed by the id too: a sealed text opens only for the webhook it was sealed to.
  const key = `${row.id}:${row.signing_secret}`;
  let secret = opened.get(key);
  if (secret === undefined) {
    if (opened.size >= 1000) opened.clear();
    secret = unseal(ctx.secret, PURPOSE, row.id, row.signing_secret);
    opened.set(key, secret);
  }
  return secret;
}

/** A non-empty list of known event types, each once. */
function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw invalidField('events', 'must name at least one event type.');
  events.forEach((type, i) => {
    if (!isWebhookEventType(type)) throw invalidField(`events[${i}]`, `${quoted(type)} is not an event type.`);
  });
  return [...new Set(events)];
}

function checkEndpoint(ctx: Context, endpoint: string): Promise<string> {
  return checkEndpointUrl(endpoint, ctx.config.allowPrivateWebhookUrls);
}

async function findOrThrow(ctx: Context, project: string, id: string): Promise<store.WebhookRow> {
  const row = await store.findWebhook(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('Webhook');
  return row;
}

/** POST /webhooks: enabled from the start; the only answer but GET's that shows the secret. */
export async function createWebhook(ctx: Context, project: string, input: CreateWebhookInput): Promise<{ id: string; signing_secret: string }> {
  const events = checkEvents(input.events);
  const endpoint = await checkEndpoint(ctx, input.endpoint);
  const id = newId();
  const secret = newSigningSecret();
  await store.insertWebhook(ctx.db, {
    id,
    project_id: project,
    endpoint,
    events,
    status: 'enabled',
    disabled_reason: null,
    signing_secret: sealed(ctx, id, secret),
    failing_since: null,
    created_at: toTimestamp(ctx.clock.now()),
  });
  ctx.webhooks.clear();
  return { id, signing_secret: secret };
}

/** GET /webhooks/:id: with the secret in the clear, and why it was disabled (Mailroom's addition) when it is. */
export async function getWebhook(ctx: Context, project: string, id: string) {
  const row = await findOrThrow(ctx, project, id);
  const webhook = {
    id: row.id,
    created_at: row.created_at,
    status: row.status,
    endpoint: row.endpoint,
    events: row.events,
    signing_secret: signingSecretOf(ctx, row),
  };
  return row.status === 'disabled' ? { ...webhook, disabled_reason: row.disabled_reason } : webhook;
}

/** GET /webhooks: each row with its secret in the clear, as Resend's list and the Python SDK's type have it. */
export async function listWebhooks(ctx: Context, project: string, page: PageRequest) {
  return mapPage(await store.listWebhooks(ctx.db, project, page), (row) => ({
    object: 'webhook' as const,
    id: row.id,
    endpoint: row.endpoint,
    created_at: row.created_at,
    status: row.status,
    events: row.events,
    signing_secret: signingSecretOf(ctx, row),
  }));
}

/**
 * PATCH /webhooks/:id. Enabling clears why it was disabled and since when it has been failing, so that
 * an endpoint that was fixed starts afresh.
 */
export async function updateWebhook(ctx: Context, project: string, id: string, input: UpdateWebhookInput): Promise<void> {
  const row = await findOrThrow(ctx, project, id);
  const changes: store.WebhookChanges = {};
  if (input.events !== undefined) changes.events = checkEvents(input.events);
  if (input.status !== undefined) {
    if (!STATUSES.includes(input.status as WebhookStatus)) throw invalidField('status', 'must be "enabled" or "disabled".');
    changes.status = input.status as WebhookStatus;
    if (changes.status === 'enabled') Object.assign(changes, { disabled_reason: null, failing_since: null });
  }
  if (input.endpoint !== undefined) changes.endpoint = await checkEndpoint(ctx, input.endpoint);
  if (Object.keys(changes).length === 0) return;
  if (!(await store.updateWebhook(ctx.db, project, row.id, changes))) throw notFound('Webhook');
  ctx.webhooks.clear();
}

/** DELETE /webhooks/:id: its pending deliveries go with it. */
export async function deleteWebhook(ctx: Context, project: string, id: string): Promise<void> {
  if (!(await store.deleteWebhook(ctx.db, project, id.toLowerCase()))) throw notFound('Webhook');
  ctx.webhooks.clear();
}

/** POST /webhooks/:id/signing-secret/rotate: a new secret, in place of the old one at once. */
export async function rotateSigningSecret(ctx: Context, project: string, id: string): Promise<{ id: string; signing_secret: string }> {
  const row = await findOrThrow(ctx, project, id);
  const secret = newSigningSecret();
  if (!(await store.updateWebhook(ctx.db, project, row.id, { signing_secret: sealed(ctx, row.id, secret) }))) throw notFound('Webhook');
  ctx.webhooks.clear();
  return { id: row.id, signing_secret: secret };
}
