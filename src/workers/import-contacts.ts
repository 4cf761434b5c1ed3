import { pipeline, Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { toTimestamp } from '../clock.ts';
import type { Context } from '../context.ts';
import { CSV_OPTIONS } from '../domain/contacts/contact-imports.ts';
import { mergeRows, readRow, type ImportRow } from '../domain/contacts/import-rows.ts';
import * as imports from '../store/contact-imports.ts';
import { findContactsByEmails, setPropertyValues, upsertContacts } from '../store/contacts.ts';
import type { Job } from '../domain/jobs.ts';
import { completeJob, renewJobLock } from '../store/jobs.ts';
import { addMemberships } from '../store/segments.ts';
import { setSubscriptions } from '../store/topics.ts';

/** Rows per transaction: large enough that commits are few, small enough that progress moves often. */
const CHUNK_ROWS = 2000;

async function* csvPieces(ctx: Context, importId: string): AsyncGenerator<Buffer> {
  for (let position = 0; ; position++) {
    const piece = await imports.findImportChunk(ctx.db, importId, position);
    if (!piece) return;
    yield piece;
  }
}

/** The CSV's records, header first, read one stored piece at a time: memory stays flat at any size. */
function readRecords(ctx: Context, importId: string): AsyncIterable<string[]> {
  const parser = parse(CSV_OPTIONS);
  // Errors on either side reach the reader through the parser.
  pipeline(Readable.from(csvPieces(ctx, importId), { highWaterMark: 1 }), parser, () => undefined);
  return parser;
}

/**
 * Writes one chunk of records and the import's progress in one transaction, renewing the job's lock
 * in it: false (and nothing written) when another worker has taken the job over. The last chunk also
 * ends the import and its job.
 */
async function writeChunk(
  ctx: Context,
  job: Job<'import-contacts'>,
  importId: string,
  plan: imports.ImportPlan,
  records: string[][],
  last: boolean,
): Promise<boolean> {
  const rows = records.map((record) => readRow(record, plan)).filter((row): row is ImportRow => row !== undefined);
  const at = toTimestamp(ctx.clock.now());
  return ctx.writer.transaction(async (tx) => {
    if (!(await renewJobLock(tx, job.id, job.locked_by!, ctx.clock.now()))) return false;
    const existing = await findContactsByEmails(tx, [...new Set(rows.map((row) => row.email))]);
    const write = mergeRows(rows, existing, plan, at);
    await upsertContacts(tx, write.contacts);
    await setPropertyValues(tx, write.values);
    await addMemberships(tx, write.memberships);
    await setSubscriptions(tx, write.subscriptions);
    await imports.addImportProgress(tx, importId, { processed: records.length, failed: records.length - rows.length, ...write.counts });
    if (last) {
      await imports.finishImport(tx, importId, { status: 'completed', error: null, completed_at: at });
      await completeJob(tx, job.id);
    }
    return true;
  });
}

async function failImport(ctx: Context, job: Job<'import-contacts'>, importId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  ctx.log.warn({ import: importId, err: error }, 'contact import failed');
  await ctx.writer.transaction(async (tx) => {
    await imports.finishImport(tx, importId, { status: 'failed', error: message, completed_at: toTimestamp(ctx.clock.now()) });
    await completeJob(tx, job.id);
  });
}

/**
 * Imports a stored CSV in chunks of CHUNK_ROWS. Each chunk commits with the count of rows done, so a
 * run that crashes resumes after the last committed chunk: no row is lost or counted twice, and
 * contacts are upserted by email besides. A CSV that cannot be parsed fails the import at once; other
 * errors are retried with backoff, and fail it when the job's attempts run out.
 */
export async function importContactsTask(ctx: Context, job: Job<'import-contacts'>): Promise<void> {
  const { import_id: importId } = job.payload;
  const row = await imports.findImport(ctx.db, importId);
  if (!row || row.status === 'completed' || row.status === 'failed') return completeJob(ctx.db, job.id);
  await imports.markImportStarted(ctx.db, importId);
  let skip = 1 + row.processed; // the header, then the rows written by earlier runs
  let batch: string[][] = [];
  try {
    for await (const record of readRecords(ctx, importId)) {
      if (skip > 0) {
        skip--;
        continue;
      }
      batch.push(record);
      if (batch.length < CHUNK_ROWS) continue;
      if (!(await writeChunk(ctx, job, importId, row.plan, batch, false))) return;
      batch = [];
    }
    await writeChunk(ctx, job, importId, row.plan, batch, true);
  } catch (error) {
    if (!(error instanceof CsvError) && job.attempts < job.max_attempts) throw error;
    await failImport(ctx, job, importId, error);
  }
}
