import type { Db, Tx } from './db.ts';
import type { FeedbackReceiptTable } from './schema.ts';

export type FeedbackReceiptRow = FeedbackReceiptTable;

/** Inserts a receipt unless its (source, receipt_id) is there already: whether this one is new. */
export async function insertReceipt(tx: Tx, row: FeedbackReceiptRow): Promise<boolean> {
  const inserted = await tx
    .insertInto('feedback_receipts')
    .values(row)
    .onConflict((oc) => oc.columns(['source', 'receipt_id']).doNothing())
    .returning('source')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The newest receipt of a sender domain, if any (index feedback_receipts_domain). */
export async function lastReceipt(db: Db, domain: string): Promise<Pick<FeedbackReceiptRow, 'source' | 'created_at'> | undefined> {
  return db
    .selectFrom('feedback_receipts')
    .select(['source', 'created_at'])
    .where('domain', '=', domain)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
