import type { Context } from '../../context.ts';
import { toTimestamp } from '../../time/clock.ts';
import * as emails from '../../store/emails.ts';
import { findByRelayId } from '../../store/relay-message-ids.ts';
import { emailByMessageId } from '../bounces/reports.ts';
import { isNews, type RecipientOutcome } from '../outcomes/outcomes.ts';
import { recordOnce, type FeedbackSource } from '../outcomes/receipts.ts';
import { recordOutcomes } from '../outcomes/record-outcomes.ts';

/** One notification as a provider's reader read it, its signature verified. */
export interface Notification {
  /** The provider's id of this notification: recorded once (outcomes/receipts.ts). */
  receipt: string;
  /** The provider's id of the message, which its relay's 250 answer gave (feedback/relay-ids.ts). */
  providerId: string | undefined;
  /** The message's Message-ID header, as the provider quotes it. */
  messageId: string | undefined;
  /** What came of each recipient (outcomes.ts), addressed as the provider wrote them. */
  outcomes: RecipientOutcome[];
}

/** What a request's notifications came to. */
export interface FeedbackResult {
  object: 'feedback';
  recorded: number;
  duplicates: number;
  ignored: number;
}

interface Matched {
  notification: Notification;
  email: emails.EmailRow;
  outcomes: RecipientOutcome[];
}

/**
 * The email a notification is about, by the provider's message id, else by its Message-ID; and its
 * outcomes on the email's own recipients only, addressed as the email has them. A reason when none.
 */
async function match(ctx: Context, notification: Notification): Promise<Matched | string> {
  const byRelay = notification.providerId ? (await findByRelayId(ctx.db, notification.providerId))[0] : undefined;
  const email = (byRelay && (await emails.findEmailById(ctx.db, byRelay.email_id))) || (await emailByMessageId(ctx, notification.messageId));
  if (!email) return `no email of ours (message ${notification.providerId ?? notification.messageId ?? 'unnamed'})`;
  const recipients = new Map((await emails.findRecipients(ctx.db, email.id)).map((r) => [r.address.toLowerCase(), r.address]));
  const outcomes = notification.outcomes.flatMap((o) => {
    const address = recipients.get(o.recipient.toLowerCase());
    return address ? [{ ...o, recipient: address }] : [];
  });
  return outcomes.length > 0 || notification.outcomes.length === 0 ? { notification, email, outcomes } : `none of email ${email.id}'s recipients`;
}

/**
 * Records a provider's notifications as a DSN or an ARF report is recorded (outcomes/record-outcomes.ts),
 * each once (its receipt, in the same transaction), and a delivery only when it is news. What matches no
 * email of ours is ignored, with one log line for the request.
 */
export async function recordFeedback(ctx: Context, source: FeedbackSource, notifications: Notification[]): Promise<FeedbackResult> {
  const matched: Matched[] = [];
  const reasons: string[] = [];
  for (const notification of notifications) {
    const found = await match(ctx, notification);
    if (typeof found === 'string') reasons.push(`${notification.receipt}: ${found}`);
    else matched.push(found);
  }
  if (reasons.length > 0) ctx.log.info({ source, ignored: reasons.length, first: reasons[0] }, 'feedback ignored: it matches nothing of ours');
  const at = toTimestamp(ctx.clock.now());
  const fresh: boolean[] = matched.length === 0 ? [] : await ctx.writer.transaction(async (tx) => {
    const recorded: boolean[] = [];
    for (const { notification, email, outcomes } of matched) {
      recorded.push(
        await recordOnce(tx, source, notification.receipt, email, at, async () => {
          // Each recipient's last event: a delay reported after its delivery leaves its status delivered.
          const last = new Map((await emails.listEvents(tx, email.id)).map((e) => [e.recipient, e.type]));
          const news = outcomes.filter((o) => isNews(o, last.get(o.recipient) ?? ''));
          if (news.length > 0) await recordOutcomes(ctx, tx, email, news, at);
        }),
      );
    }
    return recorded;
  });
  const duplicates = fresh.filter((recorded) => !recorded).length;
  if (duplicates > 0) ctx.log.info({ source, duplicates }, 'feedback recorded already: nothing recorded again');
  return { object: 'feedback', recorded: fresh.length - duplicates, duplicates, ignored: reasons.length };
}
