// Custom events: the names that start automations and end their waits, each with an optional schema
// of its payload (a flat map of keys to string, number, boolean or date). Sending an event needs no
// definition; when one exists, the payload is checked against its schema and coerced to its types.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, invalidField, notFound, quoted } from '../../errors.ts';
import { isUuid, newId } from '../../time/ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import * as store from '../../store/custom-events.ts';
import { parsed, json } from '../../store/json.ts';
import { mapPage, type PageRequest } from '../../store/paginate.ts';
import { isReservedEventName } from './graph.ts';

const FIELD_TYPES = ['string', 'number', 'boolean', 'date'] as const;
type FieldType = (typeof FIELD_TYPES)[number];
export type EventSchema = Record<string, FieldType>;
export type Payload = Record<string, unknown>;

const MAX_NAME = 255;
const MAX_FIELDS = 100;
/** A field name is a key of the payload, and named in rules as `event.<key>`: as long as a property's. */
const MAX_FIELD_NAME = 100;

/** An event's name as given: 1 to 255 characters, not `resend:`. */
export function checkEventName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || name.trim() === '') throw new AppError('missing_required_field', `Missing \`${field}\` field.`);
  if (name.length > MAX_NAME) throw invalidField(field, `at most ${MAX_NAME} characters.`);
  if (isReservedEventName(name)) throw invalidField(field, 'names starting with `resend:` are reserved for Resend\'s own events.');
  return name;
}

function checkSchema(schema: unknown): EventSchema | null {
  if (schema === undefined || schema === null) return null;
  if (typeof schema !== 'object' || Array.isArray(schema)) throw invalidField('schema', 'a flat object of field names to "string", "number", "boolean" or "date".');
  const entries = Object.entries(schema);
  if (entries.length > MAX_FIELDS) throw invalidField('schema', `at most ${MAX_FIELDS} fields.`);
  for (const [key, type] of entries) {
    if (key.length > MAX_FIELD_NAME) throw invalidField(`schema.${key}`, `a field name is at most ${MAX_FIELD_NAME} characters.`);
    if (!FIELD_TYPES.includes(type as FieldType)) throw invalidField(`schema.${key}`, 'the type must be "string", "number", "boolean" or "date".');
  }
  return schema as EventSchema;
}

function toEvent(row: store.CustomEventRow) {
  return { id: row.id, name: row.name, schema: parsed<EventSchema>(row.schema), created_at: row.created_at, updated_at: row.updated_at };
}

/** POST /events: a name is unique within the project. */
export async function createEvent(ctx: Context, project: string, input: { name?: unknown; schema?: unknown }): Promise<{ id: string }> {
  const name = checkEventName(input.name);
  const schema = checkSchema(input.schema);
  const row = { id: newId(), project_id: project, name, schema: json(schema), created_at: toTimestamp(ctx.clock.now()), updated_at: null };
  try {
    await store.insertCustomEvent(ctx.db, row);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw new AppError('validation_error', `An event named ${quoted(name)} already exists.`);
  }
  return { id: row.id };
}

/** The project's event by id or name; another project's is not found, as a missing one. */
async function findEventOrThrow(ctx: Context, project: string, identifier: string): Promise<store.CustomEventRow> {
  const row =
    (isUuid(identifier) && (await store.findCustomEvent(ctx.db, project, { id: identifier.toLowerCase() }))) ||
    (await store.findCustomEvent(ctx.db, project, { name: identifier }));
  if (!row) throw notFound('Event');
  return row;
}

export async function getEvent(ctx: Context, project: string, identifier: string) {
  return { object: 'event' as const, ...toEvent(await findEventOrThrow(ctx, project, identifier)) };
}

export async function listEvents(ctx: Context, project: string, page: PageRequest) {
  return mapPage(await store.listCustomEvents(ctx.db, project, page), toEvent);
}

export async function updateEvent(ctx: Context, project: string, identifier: string, input: { schema?: unknown }): Promise<{ id: string }> {
  if (!('schema' in input)) throw new AppError('missing_required_field', 'Missing `schema` field.');
  const row = await findEventOrThrow(ctx, project, identifier);
  await store.updateCustomEvent(ctx.db, project, row.id, { schema: json(checkSchema(input.schema)), updated_at: toTimestamp(ctx.clock.now()) });
  return { id: row.id };
}

export async function deleteEvent(ctx: Context, project: string, identifier: string): Promise<{ id: string }> {
  const row = await findEventOrThrow(ctx, project, identifier);
  await store.deleteCustomEvent(ctx.db, project, row.id);
  return { id: row.id };
}

function coerce(value: unknown, type: FieldType, field: string): unknown {
  if (value === null) return null;
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      break;
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n === 'number' && Number.isFinite(n)) return n;
      break;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      break;
    case 'date': {
      const ms = typeof value === 'string' || typeof value === 'number' ? new Date(value).getTime() : Number.NaN;
      if (!Number.isNaN(ms)) return new Date(ms).toISOString();
      break;
    }
  }
  throw invalidField(field, `the event's schema makes it a ${type}; got ${quoted(JSON.stringify(value))}.`);
}

/**
 * A sent event's payload, checked against the schema of the project's definition of it (when there is one):
 * each field the schema names is coerced to its type ("42" to 42, "true" to true, a date to ISO 8601);
 * a value that cannot be is a 422 naming the field. Fields the schema does not name pass as they are.
 */
export async function checkPayload(ctx: Context, project: string, name: string, payload: unknown): Promise<Payload> {
  if (payload === undefined || payload === null) return {};
  if (typeof payload !== 'object' || Array.isArray(payload)) throw invalidField('payload', 'an object of key/value pairs.');
  const definition = await store.findCustomEvent(ctx.db, project, { name });
  const schema = definition && parsed<EventSchema>(definition.schema);
  if (!schema) return payload as Payload;
  const checked: Payload = { ...(payload as Payload) };
  for (const [key, type] of Object.entries(schema)) {
    if (key in checked) checked[key] = coerce(checked[key], type, `payload.${key}`);
  }
  return checked;
}
