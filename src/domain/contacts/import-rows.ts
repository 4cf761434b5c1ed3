import { invalidField, quoted } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { ImportPlan } from '../../store/contact-imports.ts';
import type { ContactPropertyRow, PropertyValue } from '../../store/contact-properties.ts';
import type { ContactRow, PropertyValueRow } from '../../store/contacts.ts';
import type { ContactTopicTable, SegmentContactTable } from '../../store/schema.ts';
import { normalizeAddress } from '../recipients/addresses.ts';

// How the rows of a contact import's CSV become contacts. Pure rules: the worker streams the CSV and
// writes what these functions return.

/** `column_map` as the API takes it: contact fields and property keys -> CSV column names. */
export interface ColumnMap {
  email?: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: string;
  properties?: Record<string, { column: string; type?: string }>;
}

/** One CSV record read as a contact; absent fields had empty cells. Values are of their property's type. */
export interface ImportRow {
  email: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: boolean;
  values: { property_id: string; value: PropertyValue }[];
}

const FIELDS = ['email', 'first_name', 'last_name', 'unsubscribed'] as const;
const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n']);
/** A decimal number; each digit can belong to one place only, so the pattern never backtracks. */
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** "First Name", "first-name" and "first_name" all name the field first_name. */
const fieldName = (column: string) => column.trim().toLowerCase().replace(/[\s-]+/g, '_');

function findColumn(header: string[], name: string, field: string): number {
  const exact = header.indexOf(name);
  const index = exact >= 0 ? exact : header.findIndex((column) => column.trim().toLowerCase() === name.trim().toLowerCase());
  if (index < 0) throw invalidField(field, `the CSV has no column ${quoted(name)}.`);
  return index;
}

/**
 * Resolves a column map against the CSV's header. A field left out of the map is read from a column
 * named like it, if any; there must be an email column. Every mapped property must exist, and a
 * `type` given for it must be its type.
 */
export function planColumns(
  header: string[],
  map: ColumnMap,
  definitions: ContactPropertyRow[],
): Pick<ImportPlan, 'columns' | 'properties'> {
  const columns: Partial<ImportPlan['columns']> = {};
  for (const field of FIELDS) {
    const name = map[field];
    const index = name !== undefined ? findColumn(header, name, `column_map.${field}`) : header.findIndex((c) => fieldName(c) === field);
    if (index >= 0) columns[field] = index;
  }
  if (columns.email === undefined) {
    throw invalidField('column_map.email', 'the CSV has no "email" column; name the column of the email addresses.');
  }
  const properties = Object.entries(map.properties ?? {}).map(([key, mapping]) => {
    const field = `column_map.properties.${key}`;
    const definition = definitions.find((d) => d.key === key);
    if (!definition) throw invalidField(field, `there is no contact property ${quoted(key)}; create it first with POST /contact-properties.`);
    if (mapping.type !== undefined && mapping.type !== definition.type) {
      throw invalidField(`${field}.type`, `the property is a ${definition.type}.`);
    }
    return { id: definition.id, type: definition.type, column: findColumn(header, mapping.column, `${field}.column`) };
  });
  return { columns: columns as ImportPlan['columns'], properties };
}

/** A CSV record as a contact; undefined when it cannot be one (no valid email, a value not of its type). */
export function readRow(record: string[], plan: ImportPlan): ImportRow | undefined {
  const cell = (index: number | undefined) => (index === undefined ? undefined : record[index]?.trim() || undefined);
  const email = normalizeAddress(cell(plan.columns.email) ?? '')?.toLowerCase();
  if (!email) return undefined;
  const row: ImportRow = { email, first_name: cell(plan.columns.first_name), last_name: cell(plan.columns.last_name), values: [] };
  const unsubscribed = cell(plan.columns.unsubscribed)?.toLowerCase();
  if (unsubscribed !== undefined) {
    if (!TRUE.has(unsubscribed) && !FALSE.has(unsubscribed)) return undefined;
    row.unsubscribed = TRUE.has(unsubscribed);
  }
  for (const property of plan.properties) {
    const value = cell(property.column);
    if (value === undefined) continue;
    if (property.type === 'number' && !NUMBER.test(value)) return undefined;
    row.values.push({ property_id: property.id, value: property.type === 'number' ? Number(value) : value });
  }
  return row;
}

export interface ChunkWrite {
  contacts: ContactRow[];
  values: PropertyValueRow[];
  memberships: SegmentContactTable[];
  subscriptions: ContactTopicTable[];
  counts: { created: number; updated: number; skipped: number };
}

/**
 * The rows one chunk writes in the import's project, given its contacts that already have the chunk's
 * emails. A new email is created; an existing one is skipped (`on_conflict: skip`) or updated with the
 * cells that have a value (`upsert`). An email met again later in the file counts as existing by then.
 * Written contacts join the import's segments and take its topic subscriptions.
 */
export function mergeRows(project: string, rows: ImportRow[], existing: ContactRow[], plan: ImportPlan, createdAt: string): ChunkWrite {
  const stored = new Map(existing.map((contact) => [contact.email, contact]));
  const written = new Map<string, { contact: ContactRow; values: Map<string, PropertyValue> }>();
  const counts = { created: 0, updated: 0, skipped: 0 };
  for (const row of rows) {
    const earlier = written.get(row.email);
    const current = earlier?.contact ?? stored.get(row.email);
    if (current && plan.on_conflict === 'skip') {
      counts.skipped++;
      continue;
    }
    counts[current ? 'updated' : 'created']++;
    const contact: ContactRow = {
      project_id: project,
      id: current?.id ?? newId(),
      email: row.email,
      first_name: row.first_name ?? current?.first_name ?? null,
      last_name: row.last_name ?? current?.last_name ?? null,
      unsubscribed: row.unsubscribed === undefined ? (current?.unsubscribed ?? 0) : Number(row.unsubscribed),
      created_at: current?.created_at ?? createdAt,
    };
    const values = new Map(earlier?.values);
    for (const { property_id, value } of row.values) values.set(property_id, value);
    written.set(row.email, { contact, values });
  }
  const all = [...written.values()];
  return {
    contacts: all.map((w) => w.contact),
    values: all.flatMap((w) => [...w.values].map(([property_id, value]) => ({ contact_id: w.contact.id, property_id, value }))),
    memberships: all.flatMap((w) => plan.segments.map((segment_id) => ({ segment_id, contact_id: w.contact.id }))),
    subscriptions: all.flatMap((w) => plan.topics.map((t) => ({ contact_id: w.contact.id, ...t }))),
    counts,
  };
}
