import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { ContactTopicTable, TopicTable } from './schema.ts';

export type TopicRow = TopicTable;

export async function insertTopic(db: Db | Tx, row: TopicRow): Promise<void> {
  await db.insertInto('topics').values(row).execute();
}

/** The project's topic of that id; another project's is none. */
export async function findTopic(db: Db, project: string, id: string): Promise<TopicRow | undefined> {
  return db.selectFrom('topics').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** Which of these ids name a topic of the project. */
export async function findTopicIds(db: Db, project: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('topics').select('id').where('id', 'in', ids).where('project_id', '=', project).execute();
  return new Set(rows.map((row) => row.id));
}

export async function listTopics(db: Db, project: string, page: PageRequest) {
  return selectPage(db.selectFrom('topics').selectAll().where('project_id', '=', project), 'id', page);
}

export async function updateTopic(
  db: Db | Tx,
  project: string,
  id: string,
  changes: Partial<Pick<TopicRow, 'name' | 'description' | 'visibility'>>,
): Promise<void> {
  if (Object.keys(changes).length > 0) await db.updateTable('topics').set(changes).where('id', '=', id).where('project_id', '=', project).execute();
}

/** Deletes a topic and every subscription to it (cascade). */
export async function deleteTopic(db: Db | Tx, project: string, id: string): Promise<void> {
  await db.deleteFrom('topics').where('id', '=', id).where('project_id', '=', project).execute();
}

/** Sets contacts' subscriptions to topics, replacing any they had. */
export async function setSubscriptions(tx: Tx, rows: ContactTopicTable[]): Promise<void> {
  await insertRows(tx, 'contact_topics', rows, (query) =>
    query.onConflict((oc) =>
      oc.columns(['contact_id', 'topic_id']).doUpdateSet((eb) => ({ subscription: eb.ref('excluded.subscription') })),
    ),
  );
}

/** Every topic of the project with the contact's subscription to it: its own choice, else the topic's default. */
export async function listContactTopics(db: Db, project: string, contactId: string, page: PageRequest) {
  const query = db
    .selectFrom('topics')
    .leftJoin('contact_topics', (join) =>
      join.onRef('contact_topics.topic_id', '=', 'topics.id').on('contact_topics.contact_id', '=', contactId),
    )
    .select((eb) => [
      'topics.id',
      'topics.name',
      'topics.description',
      'topics.visibility',
      eb.fn.coalesce('contact_topics.subscription', 'topics.default_subscription').as('subscription'),
    ])
    .where('topics.project_id', '=', project);
  return selectPage(query, 'topics.id', page);
}

/** For each of these (lowercased) addresses that is a contact of the project: its unsubscribed flag and its own choice on the topic. */
export async function findTopicSubscriptions(db: Db, project: string, topicId: string, emails: string[]) {
  if (emails.length === 0) return [];
  return db
    .selectFrom('contacts')
    .leftJoin('contact_topics', (join) =>
      join.onRef('contact_topics.contact_id', '=', 'contacts.id').on('contact_topics.topic_id', '=', topicId),
    )
    .select(['contacts.email', 'contacts.unsubscribed', 'contact_topics.subscription'])
    .where('contacts.email', 'in', emails)
    .where('contacts.project_id', '=', project)
    .execute();
}
