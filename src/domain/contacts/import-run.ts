import { pipeline, Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import * as imports from '../../store/contact-imports.ts';
import { findContactsByEmails, setPropertyValues, upsertContacts } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { addMemberships } from '../../store/segments.ts';
import { setSubscriptions } from '../../store/topics.ts';
import { CSV_OPTIONS } from './contact-imports.ts';
import { mergeRows, readRow, type ImportRow } from './import-rows.ts';

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

/** What writes one chunk of records into the import's project, and the import's progress; the last chunk also ends the import. */
function chunkWrite(ctx: Context, contactImport: imports.ImportRow, records: string[][], last: boolean): (tx: Tx) => Promise<void> {
  const { id: importId, project_id: project, plan } = contactImport;
  const rows = records.map((record) => readRow(record, plan)).filter((row): row is ImportRow => row !== undefined);
  const at = toTimestamp(ctx.clock.now());
  return async (tx) => {
    const existing = await findContactsByEmails(tx, project, [...new Set(rows.map((row) => row.email))]);
    const write = mergeRows(project, rows, existing, plan, at);
    await upsertContacts(tx, write.contacts);
    await setPropertyValues(tx, write.values);
    await addMemberships(tx, write.memberships);
    await setSubscriptions(tx, write.subscriptions);
    await imports.addImportProgress(tx, importId, { processed: records.length, failed: records.length - rows.length, ...write.counts });
    if (last) await imports.finishImport(tx, importId, { status: 'completed', error: null, completed_at: at });
  };
}

/** The import failed for good, saying why. */
function failed(ctx: Context, importId: string, error: unknown): TaskResult {
  const message = error instanceof Error ? error.message : String(error);
  ctx.log.warn({ import: importId, err: error }, 'contact import failed');
  return done((tx) => imports.finishImport(tx, importId, { status: 'failed', error: message, completed_at: toTimestamp(ctx.clock.now()) }));
}

/**
 * The `import-contacts` task: imports a stored CSV in chunks of CHUNK_ROWS, each a checkpoint with the
 * count of rows done, the last written with the job's end. A run that crashes resumes after the last
 * committed chunk: no row is lost or counted twice, and contacts are upserted by email besides. A CSV
 * that cannot be parsed fails the import at once; other errors are retried with backoff, and fail it
 * on the last attempt.
 */
export async function runImport(ctx: Context, attempt: Attempt<'import-contacts'>): Promise<TaskResult> {
  const { import_id: importId } = attempt.payload;
  const row = await imports.findImportById(ctx.db, importId);
  if (!row || row.status === 'completed' || row.status === 'failed') return done();
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
      if (!(await attempt.checkpoint(chunkWrite(ctx, row, batch, false)))) return done();
      batch = [];
    }
    return done(chunkWrite(ctx, row, batch, true));
  } catch (error) {
    if (!(error instanceof CsvError) && !attempt.last) throw error;
    return failed(ctx, importId, error);
  }
}
