import { sql } from 'kysely';
import type { Db, Tx } from './db.ts';
import { isPostgres } from './db.ts';

// Retention's statements (domain/retention/retention.ts): each finds or removes one batch, oldest first,
// through an index that skips what is gone (0020-retention.ts). Timestamps are Resend's text, which
// sorts as time.

/**
 * Up to `limit` emails created before `before`, bodies still kept, whose last event is one of `settled`
 * and that no job named `jobKeyPrefix` + id still waits to send (a recipient deferred): oldest first.
 */
export async function findExpiredEmails(tx: Tx, options: { before: string; settled: readonly string[]; jobKeyPrefix: string; limit: number }): Promise<string[]> {
  const rows = await tx
    .selectFrom('emails')
    .select('id')
    .where('body_removed_at', 'is', null)
    .where('created_at', '<', options.before)
    .where('last_event', 'in', options.settled)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('jobs').select('jobs.id').where('jobs.key', '=', sql<string>`${options.jobKeyPrefix} || emails.id`))),
    )
    .orderBy('created_at')
    .limit(options.limit)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Deletes the bodies, attachments, submitted source and sent message of emails `ids`, and the ids a
 * relay gave them (a provider's notification comes within days), and marks them removed `at`.
 */
export async function removeEmailBodies(tx: Tx, ids: string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  for (const table of ['email_contents', 'email_attachments', 'email_sources', 'sent_messages', 'relay_message_ids'] as const) {
    await tx.deleteFrom(table).where('email_id', 'in', ids).execute();
  }
  await tx.updateTable('emails').set({ body_removed_at: at }).where('id', 'in', ids).execute();
}

/** Up to `limit` received emails created before `before` whose bodies are still kept, oldest first. */
export async function findExpiredReceivedEmails(tx: Tx, before: string, limit: number): Promise<string[]> {
  const rows = await tx
    .selectFrom('received_emails')
    .select('id')
    .where('body_removed_at', 'is', null)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Deletes the bytes and attachments of received emails `ids`, clears their html and text, and marks them removed `at`. */
export async function removeReceivedBodies(tx: Tx, ids: string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await tx.deleteFrom('received_messages').where('email_id', 'in', ids).execute();
  await tx.deleteFrom('received_attachments').where('email_id', 'in', ids).execute();
  await tx.updateTable('received_emails').set({ html: null, text: null, body_removed_at: at }).where('id', 'in', ids).execute();
}

/** Deletes up to `limit` webhook attempts made before `before`, oldest first; returns how many. */
export async function deleteWebhookAttempts(tx: Tx, before: string, limit: number): Promise<number> {
  const result = await tx
    .deleteFrom('webhook_attempts')
    .where('id', 'in', (eb) => eb.selectFrom('webhook_attempts').select('id').where('sent_at', '<', before).orderBy('sent_at').limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** DMARC reports received before `before`, `limit` at a time; their rows go with them (a report has up to 20,000). */
export async function deleteDmarcReports(tx: Tx, before: string, limit: number): Promise<number> {
  const result = await tx
    .deleteFrom('dmarc_reports')
    .where('id', 'in', (eb) => eb.selectFrom('dmarc_reports').select('id').where('received_at', '<', before).orderBy('received_at').limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * SQLite: the free pages of the file, when it hands them back (auto_vacuum = INCREMENTAL, see db.ts);
 * 0 otherwise, and on PostgreSQL, whose own vacuum reuses the space.
 */
export async function reclaimablePages(db: Db | Tx): Promise<number> {
  if (isPostgres(db)) return 0;
  const mode = await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(db);
  if (mode.rows[0]?.auto_vacuum !== 2) return 0;
  const free = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(db);
  return Number(free.rows[0]?.freelist_count ?? 0);
}

/** SQLite: hands up to `pages` free pages back to the file system (the file shrinks at the next checkpoint). */
export async function reclaimPages(tx: Tx, pages: number): Promise<void> {
  await sql`pragma incremental_vacuum(${sql.raw(String(Math.trunc(pages)))})`.execute(tx);
}
