import type { Db } from './db.ts';
import type { Period } from './usage.ts';

// The projects page's counts: one statement for a page of projects, each count grouped by project.

export interface ProjectCounts {
  sent_today: number;
  sent_this_month: number;
  domains: number;
  api_keys: number;
}

/**
 * For each of `ids`: its emails accepted today and this month, canceled ones aside (as GET /usage
 * counts them; `today` lies within `month`, so one pass over the month's emails counts both), its domains and its keys. Projects with none count 0.
 */
export async function countByProject(db: Db, ids: string[], today: Period, month: Period): Promise<Map<string, ProjectCounts>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('projects')
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('emails')
          .select((e) => [
            'project_id',
            e.fn.sum<number>(e.case().when(e.and([e('created_at', '>=', today.from), e('created_at', '<', today.until)])).then(1).else(0).end()).as('today'),
            e.fn.countAll<number>().as('month'),
          ])
          .where('project_id', 'in', ids)
          .where('id', '>=', month.idFrom)
          .where('created_at', '>=', month.from)
          .where('created_at', '<', month.until)
          .where('last_event', '<>', 'canceled')
          .groupBy('project_id')
          .as('sent'),
      (join) => join.onRef('sent.project_id', '=', 'projects.id'),
    )
    .leftJoin(
      (eb) => eb.selectFrom('domains').select((e) => ['project_id', e.fn.countAll<number>().as('n')]).where('project_id', 'in', ids).groupBy('project_id').as('d'),
      (join) => join.onRef('d.project_id', '=', 'projects.id'),
    )
    .leftJoin(
      (eb) => eb.selectFrom('api_keys').select((e) => ['project_id', e.fn.countAll<number>().as('n')]).where('project_id', 'in', ids).groupBy('project_id').as('k'),
      (join) => join.onRef('k.project_id', '=', 'projects.id'),
    )
    .select(['projects.id', 'sent.today', 'sent.month', 'd.n as domains', 'k.n as api_keys'])
    .where('projects.id', 'in', ids)
    .execute();
  const count = (value: number | string | bigint | null) => Number(value ?? 0);
  return new Map(
    rows.map((row) => [row.id, { sent_today: count(row.today), sent_this_month: count(row.month), domains: count(row.domains), api_keys: count(row.api_keys) }]),
  );
}
