import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { findBroadcast } from '../../store/broadcasts.ts';
import { countBroadcastEmails, listEmails } from '../../store/emails.ts';
import type { PageRequest } from '../../store/paginate.ts';

// What became of a broadcast's emails (one per recipient, written by the fan-out): the dashboard's
// counts and recipient list.

async function checkExists(ctx: Context, project: string, id: string): Promise<string> {
  const row = await findBroadcast(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('Broadcast');
  return row.id;
}

/** How many of the broadcast's emails stand in each status (last_event); statuses with none are absent. */
export async function countEmailsByStatus(ctx: Context, project: string, id: string): Promise<Record<string, number>> {
  return countBroadcastEmails(ctx.db, await checkExists(ctx, project, id));
}

/** A page of the broadcast's emails, newest first: each recipient with the status of their email. */
export async function listRecipients(ctx: Context, project: string, id: string, page: PageRequest) {
  const result = await listEmails(ctx.db, project, page, { broadcast_id: await checkExists(ctx, project, id) });
  return {
    has_more: result.has_more,
    data: result.data.map((row) => ({ id: row.id, email: row.to[0] ?? '', last_event: row.last_event, created_at: row.created_at })),
  };
}
