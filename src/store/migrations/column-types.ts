import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../db.ts';

// The column types whose spelling differs between the dialects.
export function columnTypes(db: Kysely<any>): { id: RawBuilder<unknown>; blob: RawBuilder<unknown> } {
  const pg = isPostgres(db);
  return {
    // Ids are compared in pagination: byte order ("C") keeps UUIDv7 order on every PostgreSQL locale.
    id: pg ? sql`text collate "C"` : sql`text`,
    blob: pg ? sql`bytea` : sql`blob`,
  };
}
