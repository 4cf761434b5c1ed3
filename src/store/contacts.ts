import { sql, type SelectQueryBuilder } from 'kysely';
import type { PropertyValue } from './contact-properties.ts';
import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import { contains } from './like-pattern.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ContactPropertyValueTable, ContactTable, Database } from './schema.ts';

export type ContactRow = ContactTable;

/** A contact's value of a property, parsed: the table keeps it as JSON text, so that it keeps its type. */
export interface PropertyValueRow extends Omit<ContactPropertyValueTable, 'value'> {
  value: PropertyValue;
}

const COLUMNS = ['id', 'project_id', 'email', 'first_name', 'last_name', 'created_at', 'unsubscribed'] as const;

/** The project's contact of that id; another project's is none. */
export async function findContactById(db: Db | Tx, project: string, id: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').select(COLUMNS).where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** The contact of that id in any project: for a link we signed, which holds the id (the unsubscribe page). */
export async function findContactInAnyProject(db: Db | Tx, id: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** The project's contact with this (lowercased) email, if any. */
export async function findContactByEmail(db: Db | Tx, project: string, email: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').select(COLUMNS).where('email', '=', email).where('project_id', '=', project).executeTakeFirst();
}

export async function findContactsByEmails(db: Db | Tx, project: string, emails: string[]): Promise<ContactRow[]> {
  if (emails.length === 0) return [];
  return db.selectFrom('contacts').select(COLUMNS).where('email', 'in', emails).where('project_id', '=', project).execute();
}

/** Inserts a contact unless one of its project has its email already; false when one had. */
export async function insertContact(tx: Tx, row: ContactRow): Promise<boolean> {
  const result = await tx
    .insertInto('contacts')
    .values(row)
    .onConflict((oc) => oc.columns(['project_id', 'email']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Inserts contacts, or rewrites the names and flag of those whose email their project has already (their id stays). */
export async function upsertContacts(tx: Tx, rows: ContactRow[]): Promise<void> {
  await insertRows(tx, 'contacts', rows, (query) =>
    query.onConflict((oc) =>
      oc.columns(['project_id', 'email']).doUpdateSet((eb) => ({
        first_name: eb.ref('excluded.first_name'),
        last_name: eb.ref('excluded.last_name'),
        unsubscribed: eb.ref('excluded.unsubscribed'),
      })),
    ),
  );
}

export async function updateContact(tx: Tx, project: string, id: string, changes: Partial<Omit<ContactRow, 'id' | 'project_id' | 'created_at'>>): Promise<void> {
  if (Object.keys(changes).length > 0) await tx.updateTable('contacts').set(changes).where('id', '=', id).where('project_id', '=', project).execute();
}

/** Deletes a contact with its memberships, subscriptions and property values (cascade). */
export async function deleteContact(db: Db | Tx, project: string, id: string): Promise<void> {
  await db.deleteFrom('contacts').where('id', '=', id).where('project_id', '=', project).execute();
}

export interface ContactFilter {
  /** Part of the email, any case (emails are stored lowercased). */
  email?: string;
}

function filtered<Q extends SelectQueryBuilder<Database, 'contacts', unknown>>(query: Q, filter: ContactFilter): Q {
  if (!filter.email) return query;
  return query.where(sql<boolean>`contacts.email like ${contains(filter.email.toLowerCase())} escape '\\'`) as Q;
}

export async function listContacts(db: Db, project: string, page: PageRequest, filter: ContactFilter = {}) {
  return selectPage(filtered(db.selectFrom('contacts').select(COLUMNS).where('project_id', '=', project), filter), 'id', page);
}

/** A segment's contacts, read in contact-id order from the membership key: every page costs the same. */
export async function listSegmentContacts(db: Db, segmentId: string, page: PageRequest, filter: ContactFilter = {}) {
  const query = db
    .selectFrom('segment_contacts')
    .innerJoin('contacts', 'contacts.id', 'segment_contacts.contact_id')
    .select(COLUMNS.map((column) => `contacts.${column}` as const))
    .where('segment_contacts.segment_id', '=', segmentId);
  return selectPage(filtered(query, filter), 'segment_contacts.contact_id', page);
}

/** A contact's property values with the key and type of their definitions. */
export async function findPropertyValues(db: Db, contactId: string) {
  const rows = await db
    .selectFrom('contact_property_values')
    .innerJoin('contact_properties', 'contact_properties.id', 'contact_property_values.property_id')
    .select(['contact_properties.key', 'contact_properties.type', 'contact_property_values.value'])
    .where('contact_property_values.contact_id', '=', contactId)
    .orderBy('contact_properties.key')
    .execute();
  return rows.map(({ key, type, value }) => ({ key, type, value: JSON.parse(value) as PropertyValue }));
}

/** Sets contacts' property values, replacing those they had; an import sets thousands at once, each made text once, here. */
export async function setPropertyValues(tx: Tx, values: PropertyValueRow[]): Promise<void> {
  const rows = values.map(({ contact_id, property_id, value }) => ({ contact_id, property_id, value: JSON.stringify(value) }));
  await insertRows(tx, 'contact_property_values', rows, (query) =>
    query.onConflict((oc) => oc.columns(['contact_id', 'property_id']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
  );
}

export async function deletePropertyValues(tx: Tx, contactId: string, propertyIds: string[]): Promise<void> {
  if (propertyIds.length === 0) return;
  await tx
    .deleteFrom('contact_property_values')
    .where('contact_id', '=', contactId)
    .where('property_id', 'in', propertyIds)
    .execute();
}
