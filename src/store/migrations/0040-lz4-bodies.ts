import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Bodies and messages compress with lz4 on PostgreSQL where the server has it (14 and newer, built with
// it, as Debian's and the official images are): pglz took 6% of the server's CPU on the send path
// (docs/decisions.md, "PostgreSQL: round trips, not statements"). Values stored before keep their pglz.
const BODIES: [table: string, column: string][] = [
  ['email_contents', 'html'],
  ['email_contents', 'text'],
  ['email_attachments', 'content'],
  ['email_sources', 'raw'],
  ['sent_messages', 'raw'],
  ['received_messages', 'raw'],
  ['received_attachments', 'content'],
];

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  const { rows } = await sql<{ lz4: boolean }>`
    select coalesce('lz4' = any(enumvals), false) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(db);
  if (!rows[0]?.lz4) return;
  for (const [table, column] of BODIES) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set compression lz4`.execute(db);
  }
}
