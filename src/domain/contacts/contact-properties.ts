import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, missingField, notFound, quoted } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/contact-properties.ts';

export interface ContactPropertyInput {
  key?: string;
  type?: string;
  fallback_value?: string | number | null;
}

// As Resend: letters, digits and underscores, at most 50, case-sensitive.
const KEY = /^[A-Za-z0-9_]{1,50}$/;

function checkFallback(type: string, value: store.PropertyValue | null | undefined): store.PropertyValue | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== type) throw invalidField('fallback_value', `expected a ${type}, the type of the property.`);
  return value;
}

async function findPropertyOrThrow(ctx: Context, project: string, id: string): Promise<store.ContactPropertyRow> {
  const property = await store.findProperty(ctx.db, project, id.toLowerCase());
  if (!property) throw notFound('Contact property');
  return property;
}

/** POST /contact-properties: a key (letters, digits, `_`), a type (string or number), an optional fallback of that type. */
export async function createProperty(ctx: Context, project: string, input: ContactPropertyInput): Promise<{ id: string }> {
  if (input.key === undefined) throw missingField('key');
  if (input.type === undefined) throw missingField('type');
  if (!KEY.test(input.key)) throw invalidField('key', 'use 1 to 50 letters, digits and underscores.');
  if (input.type !== 'string' && input.type !== 'number') throw invalidField('type', 'must be "string" or "number".');
  const row: store.ContactPropertyRow = {
    id: newId(),
    project_id: project,
    key: input.key,
    type: input.type,
    fallback_value: checkFallback(input.type, input.fallback_value),
    created_at: toTimestamp(ctx.clock.now()),
  };
  if (!(await store.insertProperty(ctx.db, row))) throw invalidField('key', `a contact property ${quoted(input.key)} exists already.`);
  return { id: row.id };
}

export async function getProperty(ctx: Context, project: string, id: string) {
  return { object: 'contact_property' as const, ...(await findPropertyOrThrow(ctx, project, id)) };
}

export async function listProperties(ctx: Context, project: string, page: PageRequest) {
  const result = await store.listProperties(ctx.db, project, page);
  return { has_more: result.has_more, data: result.data };
}

/** PATCH /contact-properties/:id: only the fallback changes; key and type are fixed. */
export async function updateProperty(ctx: Context, project: string, id: string, input: ContactPropertyInput): Promise<void> {
  const property = await findPropertyOrThrow(ctx, project, id);
  for (const field of ['key', 'type'] as const) {
    if (input[field] !== undefined && input[field] !== property[field]) {
      throw invalidField(field, 'cannot be changed after the property is created.');
    }
  }
  if (input.fallback_value !== undefined) {
    await store.setFallbackValue(ctx.db, project, property.id, checkFallback(property.type, input.fallback_value));
  }
}

export async function deleteProperty(ctx: Context, project: string, id: string): Promise<void> {
  if (!(await store.deleteProperty(ctx.db, project, id.toLowerCase()))) throw notFound('Contact property');
}
