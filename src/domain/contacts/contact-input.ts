import type { Context } from '../../context.ts';
import { invalidField, notFound, quoted } from '../../errors.ts';
import * as contacts from '../../store/contacts.ts';
import { findPropertiesByKeys } from '../../store/contact-properties.ts';
import type { ContactTopicTable, Subscription } from '../../store/schema.ts';
import { findSegmentIds } from '../../store/segments.ts';
import { findTopicIds } from '../../store/topics.ts';
import { normalizeAddress } from '../recipients/addresses.ts';

export type PropertyInput = Record<string, string | number | null>;
export type SegmentRef = string | { id: string };
export interface TopicRef {
  id: string;
  subscription: Subscription;
}

/** A contact's email as stored and compared: a valid address, lowercased. */
export function contactEmail(value: string, field = 'email'): string {
  const address = normalizeAddress(value.trim());
  if (!address) throw invalidField(field, `${quoted(value)} is not a valid email address.`);
  return address.toLowerCase();
}

/** Paths name a contact by id or by email address (the SDK puts either there, unencoded). */
export async function findContact(ctx: Context, project: string, idOrEmail: string): Promise<contacts.ContactRow | undefined> {
  if (!idOrEmail.includes('@')) return contacts.findContactById(ctx.db, project, idOrEmail.toLowerCase());
  const email = normalizeAddress(idOrEmail.trim())?.toLowerCase();
  return email === undefined ? undefined : contacts.findContactByEmail(ctx.db, project, email);
}

export async function findContactOrThrow(ctx: Context, project: string, idOrEmail: string): Promise<contacts.ContactRow> {
  const contact = await findContact(ctx, project, idOrEmail);
  if (!contact) throw notFound('Contact');
  return contact;
}

/**
 * Checks property values against their definitions: every key must be a contact property and every
 * value of its type. Null removes a value.
 */
export async function checkPropertyValues(
  ctx: Context,
  project: string,
  input: PropertyInput | undefined,
): Promise<{ set: Omit<contacts.PropertyValueRow, 'contact_id'>[]; unset: string[] }> {
  const entries = Object.entries(input ?? {});
  const definitions = new Map((await findPropertiesByKeys(ctx.db, project, entries.map(([key]) => key))).map((p) => [p.key, p]));
  const set: Omit<contacts.PropertyValueRow, 'contact_id'>[] = [];
  const unset: string[] = [];
  for (const [key, value] of entries) {
    const definition = definitions.get(key);
    if (!definition) {
      throw invalidField(`properties.${key}`, `there is no contact property ${quoted(key)}; create it first with POST /contact-properties.`);
    }
    if (value === null) unset.push(definition.id);
    else if (typeof value !== definition.type) {
      throw invalidField(`properties.${key}`, `expected a ${definition.type}, as the property is defined.`);
    }
    else set.push({ property_id: definition.id, value });
  }
  return { set, unset };
}

/** Segment references as `[{id}]` or `["id"]`; each must name a segment. */
export async function checkSegmentRefs(ctx: Context, project: string, refs: SegmentRef[], field: string): Promise<string[]> {
  const ids = refs.map((ref) => (typeof ref === 'string' ? ref : ref.id).toLowerCase());
  const known = await findSegmentIds(ctx.db, project, ids);
  ids.forEach((id, i) => {
    if (!known.has(id)) throw invalidField(`${field}[${i}]`, `there is no segment with id ${quoted(id)}.`);
  });
  return [...new Set(ids)];
}

/** Topic subscriptions `[{id, subscription}]`; each id must name a topic. */
export async function checkTopicRefs(ctx: Context, project: string, refs: TopicRef[], field: string): Promise<Omit<ContactTopicTable, 'contact_id'>[]> {
  const known = await findTopicIds(ctx.db, project, refs.map((ref) => ref.id.toLowerCase()));
  const byTopic = new Map<string, Subscription>();
  refs.forEach((ref, i) => {
    if (!known.has(ref.id.toLowerCase())) throw invalidField(`${field}[${i}].id`, `there is no topic with id ${quoted(ref.id)}.`);
    byTopic.set(ref.id.toLowerCase(), ref.subscription);
  });
  return [...byTopic].map(([topic_id, subscription]) => ({ topic_id, subscription }));
}
