import type { Context } from '../../context.ts';
import { findContactByEmail } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import { recordEvents } from '../events/email-events.ts';
import { unsubscribeContact } from '../recipients/unsubscribe.ts';
import { suppress } from '../suppressions/suppressions.ts';
import type { EventEmail } from '../webhooks/email-payload.ts';
import { listingOf, type RecipientOutcome } from './outcomes.ts';

/**
 * Records what came of an email's recipients in the caller's transaction: their events (through the
 * event seam), and what follows (outcomes.ts, listingOf): the address suppressed, and a complainer's
 * contact unsubscribed, in the email's project. Deliveries and bounce and complaint reports alike.
 */
export async function recordOutcomes(ctx: Context, tx: Tx, email: EventEmail, outcomes: RecipientOutcome[], at: string): Promise<void> {
  await recordEvents(ctx, tx, email, outcomes.map((o) => ({ recipient: o.recipient, types: o.types, response: o.response })), at);
  for (const outcome of outcomes) {
    const origin = listingOf(outcome);
    if (!origin) continue;
    await suppress(ctx, tx, email.project_id, { email: outcome.recipient, origin, sourceId: email.id }, at);
    if (origin !== 'complaint') continue;
    const contact = await findContactByEmail(tx, email.project_id, outcome.recipient.toLowerCase());
    if (contact && !contact.unsubscribed) await unsubscribeContact(ctx, tx, contact, at);
  }
}
