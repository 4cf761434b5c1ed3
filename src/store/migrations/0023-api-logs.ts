import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The API's request logs (GET /logs): one row per request, bodies as JSON text with secrets removed.
// `api_key_id` has no foreign key: a log outlives the key that made it. The primary key is the only
// index: ids are UUIDv7s of the clock's time (ids.ts newIdAt), so lists and retention's deletes by age
// are both ranges of it, and a write pays for one index.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('api_logs')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('api_key_id', t.id)
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
}
