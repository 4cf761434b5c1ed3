import type { Db } from './db.ts';

// The counts of GET /usage.

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
export async function countEmailsIn(db: Db, period: Period): Promise<number> {
  const row = await db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '>=', period.idFrom)
    .where('created_at', '>=', period.from)
    .where('created_at', '<', period.until)
    .where('last_event', '<>', 'canceled')
    .executeTakeFirst();
  return number(row);
}

/** Rows of `table` created in the period, as countEmailsIn finds emails: received emails, automation runs. */
export async function countCreatedIn(db: Db, table: 'received_emails' | 'automation_runs', period: Period): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '>=', period.idFrom)
    .where('created_at', '>=', period.from)
    .where('created_at', '<', period.until)
    .executeTakeFirst();
  return number(row);
}

/** How many rows each of these tables holds. */
export async function countRows(db: Db): Promise<{ contacts: number; segments: number; broadcasts: number; domains: number }> {
  const count = async (table: 'contacts' | 'segments' | 'broadcasts' | 'domains') =>
    number(await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst());
  const [contacts, segments, broadcasts, domains] = await Promise.all([count('contacts'), count('segments'), count('broadcasts'), count('domains')]);
  return { contacts, segments, broadcasts, domains };
}
