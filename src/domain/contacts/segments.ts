import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, missingField } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/segments.ts';
import { findContactOrThrow } from './contact-input.ts';

// Resend still says "Audience" when a segment is missing.
const segmentNotFound = () => new AppError('not_found', 'Audience not found');

export async function findSegmentOrThrow(ctx: Context, project: string, id: string): Promise<store.SegmentRow> {
  const segment = await store.findSegment(ctx.db, project, id.toLowerCase());
  if (!segment) throw segmentNotFound();
  return segment;
}

function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  if (name.trim() === '') throw new AppError('validation_error', 'Invalid `name` field: must not be empty.');
  return name;
}

/** POST /segments and the legacy POST /audiences: the same data. */
export async function createSegment(ctx: Context, project: string, input: { name?: string }): Promise<store.SegmentRow> {
  const row = { id: newId(), project_id: project, name: checkName(input.name), created_at: toTimestamp(ctx.clock.now()) };
  await store.insertSegment(ctx.db, row);
  return row;
}

export async function listSegments(ctx: Context, project: string, page: PageRequest) {
  return store.listSegments(ctx.db, project, page);
}

export async function renameSegment(ctx: Context, project: string, id: string, input: { name?: string }): Promise<void> {
  if (!(await store.renameSegment(ctx.db, project, id.toLowerCase(), checkName(input.name)))) throw segmentNotFound();
}

/** Idempotent, as Resend is: deleting a segment that does not exist answers deleted. Contacts stay. */
export async function deleteSegment(ctx: Context, project: string, id: string): Promise<void> {
  await store.deleteSegment(ctx.db, project, id.toLowerCase());
}

/** GET /contacts/:id_or_email/segments. */
export async function listContactSegments(ctx: Context, project: string, idOrEmail: string, page: PageRequest) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  return store.listContactSegments(ctx.db, contact.id, page);
}

/** POST /contacts/:id_or_email/segments/:segment_id; adding a member again changes nothing. */
export async function addContactToSegment(ctx: Context, project: string, idOrEmail: string, segmentId: string) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  const segment = await findSegmentOrThrow(ctx, project, segmentId);
  await ctx.writer.transaction((tx) => store.addMemberships(tx, [{ segment_id: segment.id, contact_id: contact.id }]));
  return { contact_id: contact.id, segment_id: segment.id };
}

/** DELETE /contacts/:id_or_email/segments/:segment_id. */
export async function removeContactFromSegment(ctx: Context, project: string, idOrEmail: string, segmentId: string) {
  const contact = await findContactOrThrow(ctx, project, idOrEmail);
  const segment = await findSegmentOrThrow(ctx, project, segmentId);
  await store.removeMembership(ctx.db, segment.id, contact.id);
  return { contact_id: contact.id, segment_id: segment.id };
}
