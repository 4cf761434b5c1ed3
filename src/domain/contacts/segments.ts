import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, missingField } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { PageRequest } from '../../store/paginate.ts';
import * as store from '../../store/segments.ts';
import { findContactOrThrow } from './contact-input.ts';

// Resend still says "Audience" when a segment is missing.
const segmentNotFound = () => new AppError('not_found', 'Audience not found');

export async function findSegmentOrThrow(ctx: Context, id: string): Promise<store.SegmentRow> {
  const segment = await store.findSegment(ctx.db, id.toLowerCase());
  if (!segment) throw segmentNotFound();
  return segment;
}

function checkName(name: string | undefined): string {
  if (name === undefined) throw missingField('name');
  if (name.trim() === '') throw new AppError('validation_error', 'Invalid `name` field: must not be empty.');
  return name;
}

/** POST /segments and the legacy POST /audiences: the same data. */
export async function createSegment(ctx: Context, input: { name?: string }): Promise<store.SegmentRow> {
  const row = { id: newId(), name: checkName(input.name), created_at: toTimestamp(ctx.clock.now()) };
  await store.insertSegment(ctx.db, row);
  return row;
}

export async function listSegments(ctx: Context, page: PageRequest) {
  return store.listSegments(ctx.db, page);
}

export async function renameSegment(ctx: Context, id: string, input: { name?: string }): Promise<void> {
  if (!(await store.renameSegment(ctx.db, id.toLowerCase(), checkName(input.name)))) throw segmentNotFound();
}

/** Idempotent, as Resend is: deleting a segment that does not exist answers deleted. Contacts stay. */
export async function deleteSegment(ctx: Context, id: string): Promise<void> {
  await store.deleteSegment(ctx.db, id.toLowerCase());
}

/** GET /contacts/:id_or_email/segments. */
export async function listContactSegments(ctx: Context, idOrEmail: string, page: PageRequest) {
  const contact = await findContactOrThrow(ctx, idOrEmail);
  return store.listContactSegments(ctx.db, contact.id, page);
}

/** POST /contacts/:id_or_email/segments/:segment_id; adding a member again changes nothing. */
export async function addContactToSegment(ctx: Context, idOrEmail: string, segmentId: string) {
  const contact = await findContactOrThrow(ctx, idOrEmail);
  const segment = await findSegmentOrThrow(ctx, segmentId);
  await ctx.writer.transaction((tx) => store.addMemberships(tx, [{ segment_id: segment.id, contact_id: contact.id }]));
  return { contact_id: contact.id, segment_id: segment.id };
}

/** DELETE /contacts/:id_or_email/segments/:segment_id. */
export async function removeContactFromSegment(ctx: Context, idOrEmail: string, segmentId: string) {
  const contact = await findContactOrThrow(ctx, idOrEmail);
  const segment = await findSegmentOrThrow(ctx, segmentId);
  await store.removeMembership(ctx.db, segment.id, contact.id);
  return { contact_id: contact.id, segment_id: segment.id };
}
