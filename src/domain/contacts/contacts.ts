import { logEvents } from '../events/event-log.ts';
import { contactEvent } from './contact-events.ts';
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, clip, missingField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import * as contacts from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import * as segments from '../../store/segments.ts';
import { setSubscriptions } from '../../store/topics.ts';
import {
  checkPropertyValues,
  checkSegmentRefs,
  checkTopicRefs,
  contactEmail,
  findContact,
  findContactOrThrow,
  type PropertyInput,
  type SegmentRef,
  type TopicRef,
} from './contact-input.ts';
import { findSegmentOrThrow } from './segments.ts';

export interface CreateContactInput {
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  properties?: PropertyInput;
  segments?: SegmentRef[];
  topics?: TopicRef[];
  /** Legacy: the audience (segment) to add the contact to. */
  audience_id?: string;
}

export interface UpdateContactInput {
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  properties?: PropertyInput;
}

/** A contact as list rows show it: its project is the caller's, not shown. */
export function toContactItem({ project_id: _, ...row }: contacts.ContactRow) {
  return { ...row, unsubscribed: row.unsubscribed === 1 };
}

/**
 * POST /contacts (and POST /audiences/:id/contacts, with `segmentId`). A project's contacts are unique by email:
 * creating one that exists answers its id and only adds it to the given segments; its fields, properties
 * and topic choices stay as they were.
 */
export async function createContact(ctx: Context, project: string, input: CreateContactInput, segmentId?: string): Promise<{ id: string }> {
  if (input.email === undefined) throw missingField('email');
  const email = contactEmail(input.email);
  if (segmentId !== undefined) await findSegmentOrThrow(ctx, project, segmentId);
  const refs = [...(input.segments ?? []), ...(input.audience_id ? [input.audience_id] : []), ...(segmentId ? [segmentId] : [])];
  const segmentIds = await checkSegmentRefs(ctx, project, refs, 'segments');
  const topics = await checkTopicRefs(ctx, project, input.topics ?? [], 'topics');
  const properties = await checkPropertyValues(ctx, project, input.properties);
  const row: contacts.ContactRow = {
    id: newId(),
    project_id: project,
    email,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    unsubscribed: input.unsubscribed ? 1 : 0,
    created_at: toTimestamp(ctx.clock.now()),
  };
  const id = await ctx.writer.transaction(async (tx) => {
    const created = await contacts.insertContact(tx, row);
    const contactId = created ? row.id : (await contacts.findContactByEmail(tx, project, email))!.id;
    if (created) {
      await contacts.setPropertyValues(tx, properties.set.map((p) => ({ contact_id: contactId, ...p })));
      await setSubscriptions(tx, topics.map((t) => ({ contact_id: contactId, ...t })));
    }
    await segments.addMemberships(tx, segmentIds.map((segment_id) => ({ segment_id, contact_id: contactId })));
    if (created) await logEvents(ctx, tx, [await contactEvent(tx, 'contact.created', row, row.created_at)], row.created_at);
    return contactId;
  });
  return { id };
}

/** The contact named by id or email; within an audience (legacy routes), only if it belongs there. */
async function findScopedContact(ctx: Context, project: string, idOrEmail: string, segmentId: string | undefined) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  if (segmentId !== undefined && !(await segments.isMember(ctx.db, segmentId.toLowerCase(), contact.id))) throw notFound('Contact');
  return contact;
}

/** Resend's contact object, with `properties` as `{key: {value, type}}`. */
export async function getContact(ctx: Context, project: string, idOrEmail: string, segmentId?: string) {
  const contact = await findScopedContact(ctx, project, idOrEmail, segmentId);
  const values = await contacts.findPropertyValues(ctx.db, contact.id);
  const properties = Object.fromEntries(values.map((v) => [v.key, { value: v.value, type: v.type }]));
  return { object: 'contact' as const, ...toContactItem(contact), properties };
}

/** A contact's changes, checked: its fields, and the property values to set and to clear. */
export interface ContactChanges {
  fields: Parameters<typeof contacts.updateContact>[3];
  properties: Awaited<ReturnType<typeof checkPropertyValues>>;
}

/** Checks the changes of a contact update (PATCH /contacts, an automation's contact_update step). */
export async function checkContactChanges(ctx: Context, project: string, input: UpdateContactInput): Promise<ContactChanges> {
  const fields: ContactChanges['fields'] = {};
  if (input.first_name !== undefined) fields.first_name = input.first_name;
  if (input.last_name !== undefined) fields.last_name = input.last_name;
  if (input.unsubscribed !== undefined) fields.unsubscribed = input.unsubscribed ? 1 : 0;
  if (input.email !== undefined) fields.email = contactEmail(input.email);
  return { fields, properties: await checkPropertyValues(ctx, project, input.properties) };
}

/** Writes checked changes of a contact in `tx`, with its contact.updated event. */
export async function writeContactChanges(ctx: Context, tx: Tx, contact: contacts.ContactRow, { fields, properties }: ContactChanges): Promise<void> {
  const project = contact.project_id;
  const owner = fields.email === undefined ? undefined : await contacts.findContactByEmail(tx, project, fields.email);
  if (owner && owner.id !== contact.id) throw new AppError('validation_error', `Another contact has the email ${clip(owner.email)}.`);
  await contacts.updateContact(tx, project, contact.id, fields);
  await contacts.setPropertyValues(tx, properties.set.map((p) => ({ contact_id: contact.id, ...p })));
  await contacts.deletePropertyValues(tx, contact.id, properties.unset);
  const at = toTimestamp(ctx.clock.now());
  await logEvents(ctx, tx, [await contactEvent(tx, 'contact.updated', { ...contact, ...fields }, at)], at);
}

/** PATCH /contacts/:id_or_email: the fields given change; `null` clears a name or a property value. */
export async function updateContact(
  ctx: Context,
  project: string,
  idOrEmail: string,
  input: UpdateContactInput,
  segmentId?: string,
): Promise<{ id: string }> {
  const contact = await findScopedContact(ctx, project, idOrEmail, segmentId);
  const changes = await checkContactChanges(ctx, project, input);
  await ctx.writer.transaction((tx) => writeContactChanges(ctx, tx, contact, changes));
  return { id: contact.id };
}

/**
 * DELETE /contacts/:id_or_email. Idempotent, as Resend is: a contact that does not exist is reported
 * deleted. Within an audience (legacy routes), the contact leaves that audience only.
 */
export async function deleteContact(ctx: Context, project: string, idOrEmail: string, segmentId?: string) {
  const contact = await findContact(ctx, project, idOrEmail);
  if (contact && segmentId !== undefined) await segments.removeMembership(ctx.db, segmentId.toLowerCase(), contact.id);
  else if (contact) {
    await ctx.writer.transaction((tx) => removeContact(ctx, tx, contact));
  }
  return { object: 'contact' as const, ...(contact ? { id: contact.id } : {}), contact: idOrEmail, deleted: true };
}

/** GET /contacts (optionally of one segment) and GET /segments/:id/contacts; the dashboard's search adds a filter. */
export async function listContacts(ctx: Context, project: string, page: PageRequest, segmentId?: string, filter: contacts.ContactFilter = {}) {
  const result =
    segmentId === undefined
      ? await contacts.listContacts(ctx.db, project, page, filter)
      : await contacts.listSegmentContacts(ctx.db, (await findSegmentOrThrow(ctx, project, segmentId)).id, page, filter);
  return mapPage(result, toContactItem);
}

/** Deletes a contact in `tx`, with its contact.deleted event. */
export async function removeContact(ctx: Context, tx: Tx, contact: contacts.ContactRow): Promise<void> {
  const at = toTimestamp(ctx.clock.now());
  const event = await contactEvent(tx, 'contact.deleted', contact, at);
  await contacts.deleteContact(tx, contact.project_id, contact.id);
  await logEvents(ctx, tx, [event], at);
}

/** The contact with this (checked) email, created in `tx` with its contact.created event if there is none. */
export async function ensureContact(ctx: Context, tx: Tx, project: string, email: string): Promise<contacts.ContactRow> {
  const row: contacts.ContactRow = { id: newId(), project_id: project, email, first_name: null, last_name: null, unsubscribed: 0, created_at: toTimestamp(ctx.clock.now()) };
  if (!(await contacts.insertContact(tx, row))) return (await contacts.findContactByEmail(tx, project, email))!;
  await logEvents(ctx, tx, [await contactEvent(tx, 'contact.created', row, row.created_at)], row.created_at);
  return row;
}
