import type { Tx } from '../../store/db.ts';
import { insertReceipt } from '../../store/feedback-receipts.ts';
import { senderDomain } from '../metrics/rollup.ts';
import type { EventEmail } from '../webhooks/email-payload.ts';

/**
 * Where a bounce, complaint or delivery notice came from: a provider's notification (domain/feedback/),
 * or a DSN or ARF report by mail (`mail`).
 */
export type FeedbackSource = 'ses' | 'postmark' | 'mailgun' | 'sendgrid' | 'mail';

/**
 * Records a notice once: its receipt (source, and the source's id of it) is inserted in the caller's
 * transaction, with what it records; a notice delivered again finds its receipt there and records
 * nothing. Whether it was recorded now.
 */
export async function recordOnce(tx: Tx, source: FeedbackSource, receiptId: string, email: EventEmail, at: string, record: () => Promise<void>): Promise<boolean> {
  const row = { source, receipt_id: receiptId, domain: senderDomain(email.from), email_id: email.id, created_at: at };
  if (!(await insertReceipt(tx, row))) return false;
  await record();
  return true;
}
