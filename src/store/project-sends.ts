import { isPostgres, type Db, type Tx } from './db.ts';

// What each project with a quota sent per UTC day and month (domain/projects/quotas.ts).

/**
 * Adds `count` to what the project sent in `period` unless the total would pass `limit`, in one
 * statement (the row is locked until the send's commit); the new total, or undefined when refused.
 */
export async function takeSends(tx: Tx, projectId: string, period: string, count: number, limit: number): Promise<number | undefined> {
  if (count > limit) return undefined;
  const row = await tx
    .insertInto('project_sends')
    .values({ project_id: projectId, period, sent: count })
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'period'])
        .doUpdateSet((eb) => ({ sent: eb('project_sends.sent', '+', eb.ref('excluded.sent')) }))
        .where((eb) => eb(eb('project_sends.sent', '+', eb.ref('excluded.sent')), '<=', limit)),
    )
    .returning('sent')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.sent);
}

/** What the project sent in `period`. */
export async function sentIn(db: Db | Tx, projectId: string, period: string): Promise<number> {
  const row = await db.selectFrom('project_sends').select('sent').where('project_id', '=', projectId).where('period', '=', period).executeTakeFirst();
  return Number(row?.sent ?? 0);
}

/** Locks the project's row of `period` until the commit (SQLite: its one writer does), so that two fan-outs never share a send; what it sent. */
export async function lockSends(tx: Tx, projectId: string, period: string): Promise<number> {
  await tx.insertInto('project_sends').values({ project_id: projectId, period, sent: 0 }).onConflict((oc) => oc.columns(['project_id', 'period']).doNothing()).execute();
  const query = tx.selectFrom('project_sends').select('sent').where('project_id', '=', projectId).where('period', '=', period);
  const row = await (isPostgres(tx) ? query.forUpdate() : query).executeTakeFirstOrThrow();
  return Number(row.sent);
}

/** Adds `count` to what the project sent in `period`. */
export async function addSends(tx: Tx, projectId: string, period: string, count: number): Promise<void> {
  await tx
    .insertInto('project_sends')
    .values({ project_id: projectId, period, sent: count })
    .onConflict((oc) => oc.columns(['project_id', 'period']).doUpdateSet((eb) => ({ sent: eb('project_sends.sent', '+', eb.ref('excluded.sent')) })))
    .execute();
}
