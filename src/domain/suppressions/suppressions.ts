// The suppression list: addresses no email goes to. The recipient policy reads it (recipients/policy.ts)
// when each email goes out, and when an automation's step decides whether to write its email; never
// when a send is accepted. Entries come from the API (origin manual)
// and from bounces and complaints, all through `suppress`; every change is logged as suppression.added
// or suppression.removed in its own transaction.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, invalidField, notFound } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { Tx } from '../../store/db.ts';
import type { PageRequest } from '../../store/paginate.ts';
import type { SuppressionOrigin } from '../../store/schema.ts';
import * as store from '../../store/suppressions.ts';
import { contactEmail } from '../contacts/contact-input.ts';
import { logEvents } from '../events/event-log.ts';
import { normalizeAddress } from '../recipients/addresses.ts';
import { suppressionEvent } from './suppression-events.ts';

export interface NewSuppression {
  /** Any valid address: stored lowercased, as a contact's is, so that the policy finds it whatever its case. */
  email: string;
  origin: SuppressionOrigin;
  /** The email that bounced or was complained about; null for a manual entry. */
  sourceId: string | null;
}

/**
 * Puts an address on the project's list in the caller's transaction and logs suppression.added. An
 * address on the list already keeps its entry (origin, source and time) and nothing is logged. Returns
 * the entry.
 */
export async function suppress(ctx: Context, tx: Tx, project: string, entry: NewSuppression, at: string): Promise<store.SuppressionRow> {
  const row = { id: newId(), project_id: project, email: contactEmail(entry.email), origin: entry.origin, source_id: entry.sourceId, created_at: at };
  if (!(await store.insertSuppression(tx, row))) return (await store.findSuppressionByEmail(tx, project, row.email))!;
  await logEvents(ctx, tx, [suppressionEvent('suppression.added', row)], at);
  return row;
}

/** A manual entry. */
const suppressManually = (ctx: Context, tx: Tx, project: string, email: string, at: string) => suppress(ctx, tx, project, { email, origin: 'manual', sourceId: null }, at);

/** Takes an entry off the list in the caller's transaction; false when another request took it first. */
async function unsuppress(ctx: Context, tx: Tx, row: store.SuppressionRow, at: string): Promise<boolean> {
  if (!(await store.deleteSuppression(tx, row.project_id, row.id))) return false;
  await logEvents(ctx, tx, [suppressionEvent('suppression.removed', row)], at);
  return true;
}

/** POST /suppressions: a manual entry. Idempotent: an address on the list already answers its entry's id. */
export async function addSuppression(ctx: Context, project: string, email: string): Promise<{ id: string }> {
  const address = contactEmail(email);
  const at = toTimestamp(ctx.clock.now());
  const row = await ctx.writer.transaction((tx) => suppressManually(ctx, tx, project, address, at));
  return { id: row.id };
}

/** POST /suppressions/batch/add: every address as POST /suppressions adds it, in one transaction, answered in order. */
export async function addSuppressions(ctx: Context, project: string, emails: string[]): Promise<{ id: string }[]> {
  if (emails.length === 0) throw invalidField('emails', 'at least one email address is required.');
  const addresses = emails.map((email, i) => contactEmail(email, `emails[${i}]`));
  const at = toTimestamp(ctx.clock.now());
  const rows = await ctx.writer.transaction(async (tx) => {
    const added: store.SuppressionRow[] = [];
    for (const email of addresses) added.push(await suppressManually(ctx, tx, project, email, at));
    return added;
  });
  return rows.map((row) => ({ id: row.id }));
}

export async function listSuppressions(ctx: Context, project: string, origin: SuppressionOrigin | undefined, page: PageRequest) {
  return store.listSuppressions(ctx.db, project, origin, page);
}

/** The project's entry a path names: by email when it holds an `@` (the SDK encodes it), else by id. */
async function findSuppression(ctx: Context, project: string, idOrEmail: string): Promise<store.SuppressionRow | undefined> {
  if (!idOrEmail.includes('@')) return store.findSuppressionById(ctx.db, project, idOrEmail.toLowerCase());
  const email = normalizeAddress(idOrEmail.trim())?.toLowerCase();
  return email === undefined ? undefined : store.findSuppressionByEmail(ctx.db, project, email);
}

async function findSuppressionOrThrow(ctx: Context, project: string, idOrEmail: string): Promise<store.SuppressionRow> {
  const row = await findSuppression(ctx, project, idOrEmail);
  if (!row) throw notFound('Suppression');
  return row;
}

/** GET /suppressions/:id_or_email. */
export async function getSuppression(ctx: Context, project: string, idOrEmail: string) {
  const { project_id: _, ...entry } = await findSuppressionOrThrow(ctx, project, idOrEmail);
  return { object: 'suppression' as const, ...entry };
}

/** DELETE /suppressions/:id_or_email: mail to the address goes out again. */
export async function removeSuppression(ctx: Context, project: string, idOrEmail: string): Promise<{ id: string }> {
  const row = await findSuppressionOrThrow(ctx, project, idOrEmail);
  const at = toTimestamp(ctx.clock.now());
  await ctx.writer.transaction((tx) => unsuppress(ctx, tx, row, at));
  return { id: row.id };
}

export interface RemoveSuppressionsInput {
  emails?: string[];
  ids?: string[];
}

/**
 * POST /suppressions/batch/remove: by `emails` or by `ids`, not both, in one transaction. Every value
 * is answered, in order: a value that names no entry gets `deleted: false`, with itself as `id`.
 */
export async function removeSuppressions(ctx: Context, project: string, input: RemoveSuppressionsInput): Promise<{ id: string; deleted: boolean }[]> {
  if ((input.emails === undefined) === (input.ids === undefined)) {
    throw new AppError('validation_error', 'Provide either `emails` or `ids`, but not both.');
  }
  const byEmail = input.emails !== undefined;
  const values = input.emails ?? input.ids!;
  if (values.length === 0) throw invalidField(byEmail ? 'emails' : 'ids', `at least one ${byEmail ? 'email address' : 'id'} is required.`);
  const keys = byEmail ? values.map((email, i) => contactEmail(email, `emails[${i}]`)) : values.map((id) => id.toLowerCase());
  const at = toTimestamp(ctx.clock.now());
  return ctx.writer.transaction(async (tx) => {
    const results: { id: string; deleted: boolean }[] = [];
    for (const [i, key] of keys.entries()) {
      const row = byEmail ? await store.findSuppressionByEmail(tx, project, key) : await store.findSuppressionById(tx, project, key);
      results.push(row ? { id: row.id, deleted: await unsuppress(ctx, tx, row, at) } : { id: values[i]!, deleted: false });
    }
    return results;
  });
}
