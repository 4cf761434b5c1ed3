import { Migrator, type Kysely, type Migration } from 'kysely';
import * as init from './0001-init.ts';

// Forward-only, in order. Registered here explicitly rather than read from the folder at run time.
const migrations: Record<string, Migration> = {
  '0001-init': init,
};

/** Brings the schema up to date; Kysely's migration lock keeps concurrent starts safe. */
export async function migrate(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
