import { isUuid } from '../time/ids.ts';
import { isPostgres, type Db, type Tx } from './db.ts';
import { json, parsed } from './json.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { TemplateTable, TemplateVersionTable } from './schema.ts';

export type TemplateRow = TemplateTable;

/** A declared variable, as a version keeps it and GET /templates/:id shows it (domain/template-variables.ts checks them). */
export interface TemplateVariable {
  id: string;
  key: string;
  type: 'string' | 'number';
  fallback_value: string | number | null;
  created_at: string;
  updated_at: string;
}

type JsonColumns = 'reply_to' | 'variables';

/** A version as the code uses it, its lists parsed: the table keeps them as JSON text; this module alone converts. */
export interface VersionRow extends Omit<TemplateVersionTable, JsonColumns> {
  reply_to: string[] | null;
  variables: TemplateVariable[];
}

/** Whichever of the JSON columns `version` has (an edit may give some only), as the table keeps them. */
function toTable<T extends Partial<VersionRow>>(version: T) {
  const out: Record<string, unknown> = { ...version };
  if (version.reply_to !== undefined) out.reply_to = json(version.reply_to);
  if (version.variables !== undefined) out.variables = JSON.stringify(version.variables);
  return out as Omit<T, JsonColumns> & Pick<TemplateVersionTable, Extract<keyof T, JsonColumns>>;
}

/** A version read from the table (alone, or joined to its template), its JSON columns parsed. */
function fromTable<T extends Pick<TemplateVersionTable, JsonColumns>>(row: T): Omit<T, JsonColumns> & Pick<VersionRow, JsonColumns> {
  return { ...row, reply_to: parsed(row.reply_to), variables: JSON.parse(row.variables) as TemplateVariable[] };
}

/** The published version of a template, as sending reads it; `version` is undefined for a draft. */
export interface PublishedTemplate {
  templateId: string;
  version: Omit<VersionRow, 'template_id' | 'created_at'> | undefined;
}

// A template is named by its id or its alias; an alias is never shaped like a UUID, so the shape decides.
const byIdOrAlias = (idOrAlias: string) =>
  isUuid(idOrAlias) ? (['t.id', idOrAlias.toLowerCase()] as const) : (['t.alias', idOrAlias] as const);

/** Inserts a new template with its first version, in the caller's transaction. */
export async function insertTemplate(tx: Tx, template: TemplateRow, version: VersionRow): Promise<void> {
  await tx.insertInto('templates').values(template).execute();
  await tx.insertInto('template_versions').values(toTable(version)).execute();
}

/** The project's template named by id or alias; `lock` holds its row until the transaction ends (PostgreSQL). */
export async function findTemplate(db: Db | Tx, project: string, idOrAlias: string, lock = false): Promise<TemplateRow | undefined> {
  const [column, value] = byIdOrAlias(idOrAlias);
  const query = db.selectFrom('templates as t').selectAll().where(column, '=', value).where('t.project_id', '=', project);
  return (lock && isPostgres(db) ? query.forUpdate() : query).executeTakeFirst();
}

/** One version of a template's content, by its id. */
export async function findVersion(db: Db | Tx, id: string): Promise<VersionRow | undefined> {
  const row = await db.selectFrom('template_versions').selectAll().where('id', '=', id).executeTakeFirst();
  return row && fromTable(row);
}

/** The hot path of sending: one indexed read of the project's template and its published version. */
export async function findPublishedTemplate(db: Db, project: string, idOrAlias: string): Promise<PublishedTemplate | undefined> {
  const [column, value] = byIdOrAlias(idOrAlias);
  const row = await db
    .selectFrom('templates as t')
    .leftJoin('template_versions as v', 'v.id', 't.published_version_id')
    .select(['t.id as template_id', 'v.id', 'v.from', 'v.subject', 'v.reply_to', 'v.html', 'v.text', 'v.variables'])
    .where(column, '=', value)
    .where('t.project_id', '=', project)
    .executeTakeFirst();
  if (!row) return undefined;
  const { template_id: templateId, id, html, variables, ...rest } = row;
  return { templateId, version: id === null ? undefined : fromTable({ id, html: html!, variables: variables!, ...rest }) };
}

/** A page of the project's templates, without their content. */
export async function listTemplates(db: Db, project: string, page: PageRequest) {
  const columns = ['id', 'name', 'alias', 'published_version_id', 'published_at', 'created_at', 'updated_at'] as const;
  return selectPage(db.selectFrom('templates').select(columns).where('project_id', '=', project), 'id', page);
}

/** Changes a template's own row: name, alias, version pointers, times. */
export async function updateTemplate(tx: Tx, project: string, id: string, changes: Partial<Omit<TemplateRow, 'id' | 'project_id'>>): Promise<void> {
  await tx.updateTable('templates').set(changes).where('id', '=', id).where('project_id', '=', project).execute();
}

/** Adds a draft version to a template. */
export async function insertVersion(tx: Tx, version: VersionRow): Promise<void> {
  await tx.insertInto('template_versions').values(toTable(version)).execute();
}

/** Edits a version in place; only ever a draft one. */
export async function updateVersion(tx: Tx, id: string, changes: Partial<Omit<VersionRow, 'id' | 'template_id'>>): Promise<void> {
  await tx.updateTable('template_versions').set(toTable(changes)).where('id', '=', id).execute();
}

/** Removes every version of a template but `keep`: the published version that `keep` replaces. */
export async function deleteOtherVersions(tx: Tx, templateId: string, keep: string): Promise<void> {
  await tx.deleteFrom('template_versions').where('template_id', '=', templateId).where('id', '!=', keep).execute();
}

/** Deletes the project's template with its versions; false when it has no such template. */
export async function deleteTemplate(db: Db, project: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('templates').where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
