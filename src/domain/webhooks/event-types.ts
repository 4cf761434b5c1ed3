// The closed list of event types a webhook can subscribe to, as Resend names them. Types that no code
// records yet (opens, clicks, inbound mail) are accepted in subscriptions, as Resend accepts them, and
// start arriving when their features record them.
export const WEBHOOK_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.scheduled',
  'email.suppressed',
  'email.received',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'domain.dmarc_report',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'suppression.added',
  'suppression.removed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const KNOWN = new Set<string>(WEBHOOK_EVENT_TYPES);

export const isWebhookEventType = (type: string): type is WebhookEventType => KNOWN.has(type);
