import type { Context } from '../../context.ts';
import type { Tx } from '../../store/db.ts';
import { insertRelayIds } from '../../store/relay-message-ids.ts';

// A relay that takes a message names it in its 250 answer, and its notifications later name it so:
// Amazon SES `250 Ok 0100018c...-000000`, SendGrid, Postmark and Postfix `250 Ok: queued as <id>`.

/** The id a relay's 250 answer gives the message, if it gives one (the most a provider's id needs: 200 characters). */
export function relayIdOf(answer: string): string | undefined {
  const id = answer.match(/^250[ -](?:2\.0\.0 )?ok:? (?:queued as )?<?([\w.@:+=-]{6,200})>?\s*$/i)?.[1];
  return id;
}

/** Keeps, with the attempt's outcomes, the id the relay gave each recipient's message. */
export async function recordRelayIds(ctx: Context, tx: Tx, emailId: string, answers: { address: string; verdict: string; real?: boolean; response: string }[]): Promise<void> {
  if (ctx.transport.kind !== 'relay') return;
  const rows = answers.flatMap((a) => {
    const id = a.real && a.verdict === 'delivered' ? relayIdOf(a.response) : undefined;
    return id ? [{ provider_id: id, email_id: emailId, recipient: a.address }] : [];
  });
  await insertRelayIds(tx, rows);
}
