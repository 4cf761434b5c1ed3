import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Idempotency keys belong to the API key that used them: one key's record must never answer another's
// request. The table is made anew with the key's id in its primary key; records are kept 24 hours
// only, so those of the old table are dropped rather than guessed an owner.
// A key from MAILROOM_API_KEY is marked `configured`, so that a new value replaces it; keys stored from
// it before were named after the variable.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('api_key_id', t.id, (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'endpoint', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();

  await db.schema.alterTable('api_keys').addColumn('configured', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.updateTable('api_keys').set({ configured: 1 }).where('name', '=', 'MAILROOM_API_KEY').execute();
}
