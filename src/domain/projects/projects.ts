import type { Context } from '../../context.ts';
import { MAX_RATE_LIMIT } from '../../config.ts';
import { AppError, invalidField, missingField, notFound } from '../../errors.ts';
import { enqueue } from '../../jobs/enqueue.ts';
import { seal } from '../../secrets/encryption.ts';
import { insertApiKey } from '../../store/api-keys.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/projects.ts';
import { toTimestamp } from '../../time/clock.ts';
import { newId } from '../../time/ids.ts';
import { mapPage } from '../../store/paginate.ts';
import { keyRow, newToken } from '../api-keys/api-keys.ts';
import { SMTP_URL_PURPOSE } from './project-relays.ts';

// Projects (docs/projects.md): the admin key's business alone. A project's own relay URL is sealed at
// rest, bound to the project's id, and never answered: it may hold a password.

export interface ProjectInput {
  name?: string;
  rate_limit?: number | null;
  daily_quota?: number | null;
  monthly_quota?: number | null;
  smtp_url?: string | null;
}

function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 50) throw invalidField('name', 'expected 1 to 50 characters.');
  return trimmed;
}

function checkCount(field: string, value: number | null | undefined, max: number): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (!Number.isInteger(value) || value < 1 || value > max) throw invalidField(field, `expected a whole number from 1 to ${max}, or null for none.`);
  return value;
}

function checkSmtpUrl(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
    throw invalidField('smtp_url', 'expected an smtp:// or smtps:// URL with a host, such as smtps://user:pass@smtp.example.com:465.');
  }
  return value;
}

/** The checked changes of `input`, the relay URL sealed for project `id`. */
function changesOf(ctx: Context, id: string, input: ProjectInput): store.ProjectChanges {
  const changes: store.ProjectChanges = {};
  if (input.name !== undefined) changes.name = checkName(input.name);
  const rate = checkCount('rate_limit', input.rate_limit, MAX_RATE_LIMIT);
  if (rate !== undefined) changes.rate_limit = rate;
  const daily = checkCount('daily_quota', input.daily_quota, 1_000_000_000);
  if (daily !== undefined) changes.daily_quota = daily;
  const monthly = checkCount('monthly_quota', input.monthly_quota, 1_000_000_000);
  if (monthly !== undefined) changes.monthly_quota = monthly;
  const smtpUrl = checkSmtpUrl(input.smtp_url);
  if (smtpUrl !== undefined) changes.smtp_url = smtpUrl === null ? null : seal(ctx.secret, SMTP_URL_PURPOSE, id, smtpUrl);
  return changes;
}

const toProject = ({ smtp_url, ...row }: store.ProjectRow) => ({ object: 'project' as const, ...row, has_smtp_url: smtp_url !== null });

/** POST /projects: the project and its first full-access key, whose token is shown only here. */
export async function createProject(ctx: Context, input: ProjectInput) {
  const id = newId();
  const row: store.ProjectRow = {
    id,
    name: checkName(input.name),
    rate_limit: null,
    daily_quota: null,
    monthly_quota: null,
    smtp_url: null,
    created_at: toTimestamp(ctx.clock.now()),
    ...changesOf(ctx, id, { ...input, name: undefined }),
  };
  const token = newToken();
  const key = keyRow(ctx, id, token, 'Default', 'full_access', null, null);
  await ctx.writer.transaction(async (tx) => {
    await store.insertProject(tx, row);
    await insertApiKey(tx, key);
  });
  return { object: 'project' as const, id, name: row.name, api_key: { id: key.id, token } };
}

export async function listProjects(ctx: Context, page: PageRequest) {
  return mapPage(await store.listProjects(ctx.db, page), toProject);
}

export async function getProject(ctx: Context, id: string) {
  const row = await store.findProject(ctx.db, id);
  if (!row) throw notFound('Project');
  return toProject(row);
}

export async function updateProject(ctx: Context, id: string, input: ProjectInput) {
  const changes = changesOf(ctx, id, input);
  const found = Object.keys(changes).length === 0 ? (await store.findProject(ctx.db, id)) !== undefined : await store.updateProject(ctx.db, id, changes);
  if (!found) throw notFound('Project');
  ctx.projects.forget(id);
  return { object: 'project' as const, id };
}

/**
 * DELETE /projects/:id: refused while it has domains or keys, unless `force`. The project and its keys
 * go at once (the keys stop working with the commit); everything else it owns, by a job.
 */
export async function deleteProject(ctx: Context, id: string, force: boolean) {
  const keys = await ctx.writer.transaction(async (tx) => {
    const holdings = await store.countHoldings(tx, id);
    if (!force && (holdings.domains > 0 || holdings.api_keys > 0)) {
      if (!(await store.findProject(tx, id))) return undefined;
      throw new AppError(
        'project_not_empty',
        `The project has ${holdings.domains} domains and ${holdings.api_keys} API keys: delete them first, or delete with ?force=true to remove everything it owns.`,
      );
    }
    const deleted = await store.deleteProjectAndKeys(tx, id);
    if (deleted) await enqueue(ctx, tx, 'delete-project', { project_id: id });
    return deleted;
  });
  if (!keys) throw notFound('Project');
  for (const key of keys) ctx.apiKeys.forget(key);
  ctx.projects.forget(id);
  ctx.domains.clear();
  return { object: 'project' as const, id, deleted: true };
}
