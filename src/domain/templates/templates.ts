import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, clip, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { isUniqueViolation, type Tx } from '../../store/db.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/templates.ts';
import { changesContent, checkAlias, checkName, versionContent, type TemplateInput } from './template-input.ts';
import { declareVariables } from './template-variables.ts';

const status = (template: Pick<store.TemplateRow, 'published_version_id'>) =>
  template.published_version_id === null ? ('draft' as const) : ('published' as const);

/** Runs a write that may set an alias, answering an alias its project has already (even one a racing request took) with 422. */
async function writeWithAlias<T>(ctx: Context, alias: string | null | undefined, write: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await ctx.writer.transaction(write);
  } catch (error) {
    if (alias && isUniqueViolation(error)) throw new AppError('validation_error', `A template with the alias \`${clip(alias)}\` already exists.`);
    throw error;
  }
}

/** POST /templates: a new template in draft, its content as version one. */
export async function createTemplate(ctx: Context, project: string, input: TemplateInput & { name: string; html: string }): Promise<{ id: string }> {
  const name = checkName(input.name);
  const alias = checkAlias(input.alias ?? null);
  const now = toTimestamp(ctx.clock.now());
  const content = versionContent(input, undefined, now);
  const id = newId();
  const versionId = newId();
  const template = { id, project_id: project, alias, name, current_version_id: versionId, published_version_id: null, published_at: null, created_at: now, updated_at: now };
  await writeWithAlias(ctx, alias, (tx) => store.insertTemplate(tx, template, { id: versionId, template_id: id, ...content, created_at: now }));
  return { id };
}

async function findOrThrow(ctx: Context, project: string, idOrAlias: string): Promise<store.TemplateRow> {
  const template = await store.findTemplate(ctx.db, project, idOrAlias);
  if (!template) throw notFound('Template');
  return template;
}

/** Resend's template object, showing the current version (which may be newer than the published one). */
export async function getTemplate(ctx: Context, project: string, idOrAlias: string) {
  const template = await findOrThrow(ctx, project, idOrAlias);
  const version = (await store.findVersion(ctx.db, template.current_version_id))!;
  return {
    object: 'template' as const,
    id: template.id,
    current_version_id: template.current_version_id,
    alias: template.alias,
    name: template.name,
    created_at: template.created_at,
    updated_at: template.updated_at,
    status: status(template),
    published_at: template.published_at,
    from: version.from,
    subject: version.subject,
    reply_to: version.reply_to,
    html: version.html,
    text: version.text,
    variables: version.variables,
    has_unpublished_versions: template.published_version_id !== null && template.published_version_id !== template.current_version_id,
  };
}

/** GET /templates: a page of list items, status derived from whether a version is published. */
export async function listTemplates(ctx: Context, project: string, page: PageRequest) {
  const result = await store.listTemplates(ctx.db, project, page);
  return {
    has_more: result.has_more,
    data: result.data.map(({ published_version_id, ...row }) => ({ ...row, status: status({ published_version_id }) })),
  };
}

/**
 * PATCH /templates/:id. Name and alias change at once. Content edits a draft version in place; when
 * the current version is the published one, they start a new draft instead, so that sending keeps
 * using the published version until the template is published again.
 */
export async function updateTemplate(ctx: Context, project: string, idOrAlias: string, input: TemplateInput): Promise<{ id: string }> {
  const changes: Partial<store.TemplateRow> = {};
  if (input.name !== undefined) changes.name = checkName(input.name);
  if (input.alias !== undefined) changes.alias = checkAlias(input.alias);
  const now = toTimestamp(ctx.clock.now());
  return writeWithAlias(ctx, changes.alias, async (tx) => {
    const template = await store.findTemplate(tx, project, idOrAlias, true);
    if (!template) throw notFound('Template');
    if (changesContent(input)) {
      const current = (await store.findVersion(tx, template.current_version_id))!;
      const content = versionContent(input, current, now);
      if (template.current_version_id === template.published_version_id) {
        changes.current_version_id = newId();
        await store.insertVersion(tx, { id: changes.current_version_id, template_id: template.id, ...content, created_at: now });
      } else {
        await store.updateVersion(tx, current.id, content);
      }
    }
    await store.updateTemplate(tx, project, template.id, { ...changes, updated_at: now });
    return { id: template.id };
  });
}

/** POST /templates/:id/publish: the current version becomes the one sending uses; the one it replaces goes. */
export async function publishTemplate(ctx: Context, project: string, idOrAlias: string): Promise<{ id: string }> {
  const now = toTimestamp(ctx.clock.now());
  return ctx.writer.transaction(async (tx) => {
    const template = await store.findTemplate(tx, project, idOrAlias, true);
    if (!template) throw notFound('Template');
    await store.updateTemplate(tx, project, template.id, { published_version_id: template.current_version_id, published_at: now, updated_at: now });
    await store.deleteOtherVersions(tx, template.id, template.current_version_id);
    return { id: template.id };
  });
}

/** POST /templates/:id/duplicate: a new draft with the current content, without the alias (aliases are unique). */
export async function duplicateTemplate(ctx: Context, project: string, idOrAlias: string): Promise<{ id: string }> {
  const now = toTimestamp(ctx.clock.now());
  const id = newId();
  const versionId = newId();
  await ctx.writer.transaction(async (tx) => {
    const source = await store.findTemplate(tx, project, idOrAlias);
    if (!source) throw notFound('Template');
    const { id: _, template_id: __, ...content } = (await store.findVersion(tx, source.current_version_id))!;
    const variables = declareVariables(content.variables, [], now);
    await store.insertTemplate(
      tx,
      { id, project_id: project, alias: null, name: `${source.name} (copy)`, current_version_id: versionId, published_version_id: null, published_at: null, created_at: now, updated_at: now },
      { ...content, id: versionId, template_id: id, variables, created_at: now },
    );
  });
  return { id };
}

/** DELETE /templates/:id: the template and its versions; emails sent with it keep their content. */
export async function deleteTemplate(ctx: Context, project: string, idOrAlias: string): Promise<{ id: string }> {
  const template = await findOrThrow(ctx, project, idOrAlias);
  if (!(await store.deleteTemplate(ctx.db, project, template.id))) throw notFound('Template');
  return { id: template.id };
}
