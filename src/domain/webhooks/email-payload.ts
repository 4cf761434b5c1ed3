import { isoTime } from '../../time/clock.ts';
import { bounceOf } from '../outcomes/outcomes.ts';
import type { EmailRow } from '../../store/emails.ts';
import type { EmailState, Engagement } from '../events/email-events.ts';
import type { NewEvent } from '../events/event-log.ts';
import { suppressedReason } from '../suppressions/suppressed-messages.ts';
import type { WebhookEventType } from './event-types.ts';

export type EventEmail = Pick<EmailRow, 'project_id' | 'id' | 'from' | 'to' | 'subject' | 'message_id' | 'created_at' | 'broadcast_id' | 'template_id' | 'tags' | 'headers'>;

/** The email states an application hears of, by their webhook event type. */
const EVENT_TYPES: Partial<Record<EmailState, WebhookEventType>> = {
  scheduled: 'email.scheduled',
  sent: 'email.sent',
  delivered: 'email.delivered',
  delivery_delayed: 'email.delivery_delayed',
  bounced: 'email.bounced',
  complained: 'email.complained',
  failed: 'email.failed',
  suppressed: 'email.suppressed',
};

/** What every email event says of its email, as Resend writes it: tags as an object, headers as a list. */
function emailData(email: EventEmail): Record<string, unknown> {
  return {
    ...(email.broadcast_id ? { broadcast_id: email.broadcast_id } : {}),
    created_at: isoTime(email.created_at),
    email_id: email.id,
    message_id: email.message_id,
    from: email.from,
    to: email.to,
    subject: email.subject,
    ...(email.template_id ? { template_id: email.template_id } : {}),
    ...(email.tags?.length ? { tags: Object.fromEntries(email.tags.map((t) => [t.name, t.value])) } : {}),
    ...(email.headers ? { headers: Object.entries(email.headers).map(([name, value]) => ({ name, value })) } : {}),
  };
}

/** What an event of `state` adds about its cause, from the answer (or reason) recorded with it. */
function details(state: EmailState, response: string | null): Record<string, unknown> {
  const message = response ?? '';
  if (state === 'bounced') return { bounce: { diagnosticCode: [message], message, ...bounceOf(message) } };
  if (state === 'failed') return { failed: { reason: message } };
  if (state === 'suppressed') {
    const reason = suppressedReason(message);
    return { suppressed: { type: 'OnAccountSuppressionList', ...(reason ? { reason } : {}), message } };
  }
  return {};
}

/**
 * The webhook events of one step of an email: one per state reached (the first recipient's answer
 * describes it), in the order the step's rows were written.
 */
export function emailEvents(email: EventEmail, steps: { state: EmailState; response: string | null }[]): NewEvent[] {
  const seen = new Set<EmailState>();
  const events: NewEvent[] = [];
  for (const { state, response } of steps) {
    const type = EVENT_TYPES[state];
    if (!type || seen.has(state)) continue;
    seen.add(state);
    events.push({ project: email.project_id, type, data: { ...emailData(email), ...details(state, response) } });
  }
  return events;
}

/** The webhook event of an open or a click (Resend's `email.opened`, and `email.clicked` with its `click`). */
export function engagementEvents(email: EventEmail, engagement: Engagement, at: string): NewEvent[] {
  if (engagement.type === 'opened') return [{ project: email.project_id, type: 'email.opened', data: emailData(email) }];
  if (engagement.type !== 'clicked') return [];
  const click = { ipAddress: engagement.client?.ipAddress ?? '', link: engagement.link ?? '', timestamp: isoTime(at), userAgent: engagement.client?.userAgent ?? '' };
  return [{ project: email.project_id, type: 'email.clicked', data: { ...emailData(email), click } }];
}
