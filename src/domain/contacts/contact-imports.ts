import { parse } from 'csv-parse/sync';
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, missingField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import * as store from '../../store/contact-imports.ts';
import { findPropertiesByKeys } from '../../store/contact-properties.ts';
import type { PageRequest } from '../../store/paginate.ts';
import { checkSegmentRefs, checkTopicRefs, type SegmentRef, type TopicRef } from './contact-input.ts';
import { planColumns, type ColumnMap } from './import-rows.ts';
import { enqueue, jobKey } from '../../jobs/enqueue.ts';

/** Resend's limit on the CSV of one import. */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;

// The CSV is stored in pieces of this size, which the worker reads one at a time.
const PIECE_BYTES = 1024 * 1024;

export interface ImportInput {
  file: Buffer | undefined;
  column_map?: ColumnMap;
  on_conflict?: string;
  segments?: SegmentRef[];
  topics?: TopicRef[];
}

/** The options shared by every CSV read of an import, so that the request and the worker agree on rows. */
export const CSV_OPTIONS = { bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: PIECE_BYTES };

function readHeader(file: Buffer): string[] {
  let records: string[][];
  try {
    records = parse(file, { ...CSV_OPTIONS, to: 1 });
  } catch (error) {
    throw invalidField('file', `the CSV header cannot be read (${(error as Error).message}).`);
  }
  if (records.length === 0) throw invalidField('file', 'the CSV is empty; its first line names the columns.');
  return records[0]!;
}

/**
 * POST /contacts/imports: checks the form against the CSV's header (columns, properties, segments,
 * topics, all the project's), then stores the import, its CSV and its job in one transaction. The
 * worker does the rest, in the import's project.
 */
export async function createImport(ctx: Context, project: string, input: ImportInput): Promise<{ id: string }> {
  if (input.file === undefined) throw missingField('file');
  const onConflict = input.on_conflict ?? 'skip';
  if (onConflict !== 'upsert' && onConflict !== 'skip') throw invalidField('on_conflict', 'must be "upsert" or "skip".');
  const header = readHeader(input.file);
  const map = input.column_map ?? {};
  const plan: store.ImportPlan = {
    on_conflict: onConflict,
    ...planColumns(header, map, await findPropertiesByKeys(ctx.db, project, Object.keys(map.properties ?? {}))),
    segments: await checkSegmentRefs(ctx, project, input.segments ?? [], 'segments'),
    topics: await checkTopicRefs(ctx, project, input.topics ?? [], 'topics'),
  };
  const row: store.ImportRow = {
    id: newId(),
    project_id: project,
    status: 'queued',
    plan,
    processed: 0,
    created: 0,
    updated: 0,
    skipped: 0,
    failed: 0,
    error: null,
    created_at: toTimestamp(ctx.clock.now()),
    completed_at: null,
  };
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < input.file.length; offset += PIECE_BYTES) pieces.push(input.file.subarray(offset, offset + PIECE_BYTES));
  await ctx.writer.transaction(async (tx) => {
    await store.insertImport(tx, row, pieces);
    await enqueue(ctx, tx, 'import-contacts', { import_id: row.id }, { key: jobKey('import-contacts', row.id) });
  });
  return { id: row.id };
}

/** Resend's contact import object: `total` counts the data rows read so far. */
function toImport(row: Omit<store.ImportRow, 'plan' | 'project_id'>) {
  return {
    object: 'contact_import' as const,
    id: row.id,
    status: row.status,
    created_at: row.created_at,
    completed_at: row.completed_at,
    counts: { total: row.processed, created: row.created, updated: row.updated, skipped: row.skipped, failed: row.failed },
  };
}

export async function getImport(ctx: Context, project: string, id: string) {
  const row = await store.findImport(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('Contact import');
  return toImport(row);
}

export async function listImports(ctx: Context, project: string, status: store.ImportRow['status'] | undefined, page: PageRequest) {
  const result = await store.listImports(ctx.db, project, status, page);
  return { has_more: result.has_more, data: result.data.map(toImport) };
}
