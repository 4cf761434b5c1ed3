// Bounce and complaint reports that arrive by mail: matched to the email and recipient they are
// about, classified, and recorded in one transaction before the inbound server answers 250. A report
// that cannot be read or matched is logged and dropped: it is accepted all the same (a refusal would
// only bounce the bounce) and it never suppresses anyone. Only a VERP address, signed for the one
// recipient, is proof enough to suppress or unsubscribe: a Message-ID is known to every recipient.
import { toTimestamp } from '../../clock.ts';
import type { Context } from '../../context.ts';
import { bounceOf } from '../../delivery/outcomes.ts';
import { isUuid } from '../../ids.ts';
import { findContactByEmail } from '../../store/contacts.ts';
import type { Tx } from '../../store/db.ts';
import * as emails from '../../store/emails.ts';
import { recordEvents, type EmailState } from '../events/email-events.ts';
import { unsubscribeContact } from '../recipients/unsubscribe.ts';
import { suppress } from '../suppressions/suppressions.ts';
import type { DsnRecipient, Report } from './report.ts';
import { readBounceAddress, signedRecipient, verpKey } from './verp.ts';

/** What a report does to one recipient of one email. */
interface Effect {
  recipient: string;
  state: Extract<EmailState, 'bounced' | 'delivery_delayed' | 'complained'>;
  response: string;
  /** The suppression it adds, if any: permanent bounces and complaints. */
  origin?: 'bounce' | 'complaint';
}

/** A matched report: the email, and the one recipient a VERP address names (undefined: matched by Message-ID). */
interface Match {
  email: emails.EmailRow;
  recipients: string[];
  signed: string | undefined;
}

/** Our email whose Message-ID (`<id@domain>`, new-email.ts) the report quotes. */
async function emailByMessageId(ctx: Context, messageId: string | undefined): Promise<emails.EmailRow | undefined> {
  const id = messageId?.match(/^<?([0-9a-f-]{36})@/i)?.[1]?.toLowerCase();
  if (!id || !isUuid(id)) return undefined;
  const email = await emails.findEmail(ctx.db, id);
  return email && email.message_id.toLowerCase() === `<${messageId!.replace(/^<|>$/g, '')}>`.toLowerCase() ? email : undefined;
}

/** The email and recipient a report is about: by its VERP address when it came to one, else by Message-ID. */
async function matchReport(ctx: Context, report: Report, bounceAddress: string | undefined): Promise<Match | string> {
  if (bounceAddress !== undefined) {
    const token = readBounceAddress(bounceAddress);
    const email = token && (await emails.findEmail(ctx.db, token.emailId));
    if (!token || !email) return `no email of ours for ${bounceAddress}`;
    const recipients = (await emails.findRecipients(ctx.db, email.id)).map((r) => r.address);
    const signed = signedRecipient(verpKey(ctx.secret), email.id, token.signature, recipients);
    return signed ? { email, recipients, signed } : `the token of ${bounceAddress} does not verify`;
  }
  const email = await emailByMessageId(ctx, report.originalMessageId);
  if (!email) return 'its original Message-ID is none of ours';
  return { email, recipients: (await emails.findRecipients(ctx.db, email.id)).map((r) => r.address), signed: undefined };
}

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * What one DSN block means: failed with a 5.x.x status is a permanent bounce (suppressed), with 4.x.x a
 * delay (the remote server still tries), with no status at all an undetermined bounce; `delayed` is a
 * delay; delivered, relayed and expanded change nothing.
 */
function dsnEffect(block: DsnRecipient, recipient: string): Effect | undefined {
  const response = [block.status, block.diagnostic].filter(Boolean).join(' ') || `Action: ${block.action || 'none'}`;
  if (block.action === 'delayed') return { recipient, state: 'delivery_delayed', response };
  if (block.action !== 'failed') return undefined;
  const { type } = bounceOf(response);
  if (type === 'Transient') return { recipient, state: 'delivery_delayed', response };
  return { recipient, state: 'bounced', response, ...(type === 'Permanent' ? { origin: 'bounce' as const } : {}) };
}

/**
 * The effects of a matched report, on the recipients it names and no other. A VERP address names one
 * recipient: a DSN's block for that address speaks for it (or its only block, when a forwarder
 * rewrote the address). Matched by Message-ID, each block speaks for the recipient it names, and a
 * complaint for the recipient in Original-Rcpt-To, or the email's only one.
 */
function effectsOf(report: Report, match: Match): Effect[] {
  if (report.kind === 'complaint') {
    // not-spam reverses a complaint and auth-failure is a DMARC forensic report: neither is a complaint.
    if (report.feedbackType === 'not-spam' || report.feedbackType === 'auth-failure') return [];
    const recipient = match.signed ?? match.recipients.find((r) => same(report.originalRecipient, r)) ?? (match.recipients.length === 1 ? match.recipients[0] : undefined);
    return recipient ? [{ recipient, state: 'complained', response: `Feedback-Type: ${report.feedbackType || 'abuse'}`, origin: 'complaint' }] : [];
  }
  if (match.signed) {
    const signed = match.signed;
    const block = report.recipients.find((b) => same(b.address, signed)) ?? (report.recipients.length === 1 ? report.recipients[0] : undefined);
    const effect = block && dsnEffect(block, signed);
    return effect ? [effect] : [];
  }
  return report.recipients.flatMap((block) => {
    const recipient = match.recipients.find((r) => same(block.address, r));
    const effect = recipient && dsnEffect(block, recipient);
    return effect ? [effect] : [];
  });
}

/** What a report matched by Message-ID alone records: its events, marked so, and never a suppression. */
function unverified(effect: Effect): Effect {
  return { recipient: effect.recipient, state: effect.state, response: `${effect.response} (unverified: matched by Message-ID, not by a VERP address)` };
}

/** Records the effects in the caller's transaction: events, suppressions, and a complainer unsubscribed. */
async function recordEffects(ctx: Context, tx: Tx, email: emails.EmailRow, effects: Effect[], at: string): Promise<void> {
  await recordEvents(ctx, tx, email, effects.map((e) => ({ recipient: e.recipient, types: [e.state], response: e.response })), at);
  for (const effect of effects) {
    if (!effect.origin) continue;
    await suppress(ctx, tx, { email: effect.recipient, origin: effect.origin, sourceId: email.id }, at);
    if (effect.origin !== 'complaint') continue;
    const contact = await findContactByEmail(tx, effect.recipient.toLowerCase());
    if (contact && !contact.unsubscribed) await unsubscribeContact(ctx, tx, contact, at);
  }
}

/** A report (as the message reader read it) matched, ready to record; undefined (with the reason logged) when it is to be dropped. */
export async function prepareReport(ctx: Context, report: Report | undefined, bounceAddress: string | undefined): Promise<((tx: Tx, at: string) => Promise<void>) | undefined> {
  const log = (reason: string) => ctx.log.info({ to: bounceAddress }, `inbound report ignored: ${reason}`);
  if (!report) {
    // Mail to a receiving domain that is no report is simply mail; only a bounce address expects one.
    if (bounceAddress !== undefined) log('not a delivery status notification or feedback report');
    return undefined;
  }
  const match = await matchReport(ctx, report, bounceAddress);
  if (typeof match === 'string') return void log(match);
  const matched = effectsOf(report, match);
  const effects = match.signed ? matched : matched.map(unverified);
  if (effects.length === 0) return void log(`nothing to record for email ${match.email.id}`);
  return (tx, at) => recordEffects(ctx, tx, match.email, effects, at);
}

/** Takes a message sent to a VERP bounce address: its report recorded and committed, or dropped with a log line. */
export async function receiveReport(ctx: Context, raw: Buffer, bounceAddress: string): Promise<void> {
  const record = await prepareReport(ctx, await ctx.reader.report(raw), bounceAddress);
  if (record) await ctx.writer.transaction((tx) => record(tx, toTimestamp(ctx.clock.now())));
}
