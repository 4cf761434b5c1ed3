// The webhook events of contacts: contact.created, updated and deleted, and contact.topics.updated.
import { isoTime } from '../../time/clock.ts';
import type { ContactRow } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import * as segments from '../../store/segments.ts';
import type { Subscription } from '../../store/schema.ts';
import type { NewEvent } from '../events/event-log.ts';

/** A contact.* webhook event: the contact as it stands, with its segments. */
export async function contactEvent(tx: Tx, type: 'contact.created' | 'contact.updated' | 'contact.deleted', contact: ContactRow, at: string): Promise<NewEvent> {
  const segmentIds = await segments.segmentIdsOf(tx, contact.id);
  const { id, email, first_name, last_name, created_at } = contact;
  return {
    project: contact.project_id,
    type,
    data: {
      id,
      audience_id: segmentIds[0] ?? null,
      segment_ids: segmentIds,
      created_at: isoTime(created_at),
      updated_at: isoTime(at),
      email,
      first_name,
      last_name,
      unsubscribed: contact.unsubscribed === 1,
    },
  };
}

/** contact.topics.updated: the topics whose subscription just changed. */
export function topicsEvent(contact: Pick<ContactRow, 'project_id' | 'email'>, topics: { topic_id: string; subscription: Subscription }[]): NewEvent {
  return { project: contact.project_id, type: 'contact.topics.updated', data: { email: contact.email, topics: topics.map((t) => ({ id: t.topic_id, subscription: t.subscription })) } };
}
