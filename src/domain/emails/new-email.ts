import type { EmailRows, Tag } from '../../store/emails.ts';
import { startingState, type RecipientEvents } from '../events/email-events.ts';
import { rollupRows } from '../metrics/rollup.ts';

/** An accepted email, checked and normalized: what POST /emails and a broadcast's fan-out both write. */
export interface NewEmail {
  /** The project it is sent in (docs/projects.md). */
  projectId: string;
  id: string;
  /** `Name <address>` as stored and shown. */
  from: string;
  /** The ASCII domain of `from`'s address: the Message-ID is `<id@fromDomain>`. */
  fromDomain: string;
  /** A submitted message's own Message-ID, kept; else the rule above. */
  messageId?: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  /** The envelope: every recipient's bare address, once. */
  envelope: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  tags: Tag[] | null;
  /** Resend's timestamp text when scheduled, else null (queued at once). */
  scheduledAt: string | null;
  templateId: string | null;
  topicId: string | null;
  broadcastId: string | null;
  personalization: object | null;
  /** What is known at acceptance: a recipient its topic refuses has failed. */
  events: RecipientEvents[];
}

/** The Message-ID Mailroom gives an email: its id at its sender's domain. */
export const newMessageId = (id: string, fromDomain: string): string => `<${id}@${fromDomain}>`;

/**
 * The rows of a new email, its recipients, its first events and their counts (the one builder: the Message-ID rule,
 * and where a new email and its recipients stand, are written here only).
 */
export function newEmailRows(email: NewEmail, createdAt: string): Omit<EmailRows, 'attachments'> {
  const state = startingState(email.id, email.envelope, email.scheduledAt === null ? 'queued' : 'scheduled', email.events, createdAt);
  return {
    email: {
      id: email.id,
      project_id: email.projectId,
      from: email.from,
      to: email.to,
      cc: email.cc,
      bcc: email.bcc,
      reply_to: email.replyTo,
      subject: email.subject,
      html: email.html,
      text: email.text,
      headers: email.headers,
      tags: email.tags,
      // The same on every retry, so a message delivered twice is recognisably the same one.
      message_id: email.messageId ?? newMessageId(email.id, email.fromDomain),
      scheduled_at: email.scheduledAt,
      last_event: state.lastEvent,
      created_at: createdAt,
      template_id: email.templateId,
      topic_id: email.topicId,
      broadcast_id: email.broadcastId,
      personalization: email.personalization,
    },
    recipients: state.recipients,
    events: state.events,
    metrics: state.events.length === 0 ? [] : rollupRows(email.projectId, email.fromDomain, email.broadcastId, state.events),
  };
}
