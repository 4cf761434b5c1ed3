import { sql } from 'kysely';
import type { Db } from './db.ts';

// The counts of GET /usage, each of one project's rows.

/**
 * The project column of tables whose row types do not name it yet (received emails, broadcasts,
 * automations: their areas are not scoped yet, docs/projects.md); migration 35 gave every one of them.
 */
const PROJECT_ID = sql.ref<string>('project_id');

/** A period's rows: created_at in [from, until) (Resend's timestamps sort as text), found by id from `idFrom`. */
export interface Period {
  idFrom: string;
  from: string;
  until: string;
}

const number = (row: { n: number | string | bigint } | undefined) => Number(row?.n ?? 0);

/**
 * Emails accepted in the period, canceled ones aside. The id bound makes it a range of the primary key
 * (ids are time-ordered) rather than a scan of the table; created_at then decides exactly.
 */
export async function countEmailsIn(db: Db, project: string, period: Period): Promise<number> {
  const row = await db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', project)
    .where('id', '>=', period.idFrom)
    .where('created_at', '>=', period.from)
    .where('created_at', '<', period.until)
    .where('last_event', '<>', 'canceled')
    .executeTakeFirst();
  return number(row);
}

/**
 * The project's rows of `table` created in the period, as countEmailsIn finds emails: received emails,
 * automation runs (the project's through their automation's).
 */
export async function countCreatedIn(db: Db, project: string, table: 'received_emails' | 'automation_runs', period: Period): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) =>
      table === 'automation_runs'
        ? eb('automation_id', 'in', eb.selectFrom('automations').select('id').where(PROJECT_ID, '=', project))
        : eb(PROJECT_ID, '=', project),
    )
    .where('id', '>=', period.idFrom)
    .where('created_at', '>=', period.from)
    .where('created_at', '<', period.until)
    .executeTakeFirst();
  return number(row);
}

/** How many rows of the project each of these tables holds. */
export async function countRows(db: Db, project: string): Promise<{ contacts: number; segments: number; broadcasts: number; domains: number }> {
  const count = async (table: 'contacts' | 'segments' | 'broadcasts' | 'domains') =>
    number(await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where(PROJECT_ID, '=', project).executeTakeFirst());
  const [contacts, segments, broadcasts, domains] = await Promise.all([count('contacts'), count('segments'), count('broadcasts'), count('domains')]);
  return { contacts, segments, broadcasts, domains };
}
