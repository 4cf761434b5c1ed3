// Bounce and complaint reports that arrive by mail: matched to the email and recipient they are
// about, classified, and recorded in one transaction before the inbound server answers 250. A report
// that cannot be read or matched is logged and dropped: it is accepted all the same (a refusal would
// only bounce the bounce) and it never suppresses anyone. Only a VERP address, signed for the one
// recipient, is proof enough to suppress or unsubscribe: a Message-ID is known to every recipient.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { isUuid } from '../../time/ids.ts';
import type { Tx } from '../../store/db.ts';
import * as emails from '../../store/emails.ts';
import { complaintOutcome, dsnOutcome, type RecipientOutcome } from '../outcomes/outcomes.ts';
import { recordOutcomes } from '../outcomes/record-outcomes.ts';
import { recordOnce } from '../outcomes/receipts.ts';
import type { Report } from './report.ts';
import { readBounceAddress, signedRecipient, verpKey } from './verp.ts';

/** A matched report: the email, and the one recipient a VERP address names (undefined: matched by Message-ID). */
interface Match {
  email: emails.EmailRow;
  recipients: string[];
  signed: string | undefined;
}

/** Our email whose Message-ID (`<id@domain>`, new-email.ts) a report or a provider's notification quotes. */
export async function emailByMessageId(ctx: Context, messageId: string | undefined): Promise<emails.EmailRow | undefined> {
  const id = messageId?.match(/^<?([0-9a-f-]{36})@/i)?.[1]?.toLowerCase();
  if (!id || !isUuid(id)) return undefined;
  const email = await emails.findEmailById(ctx.db, id);
  return email && email.message_id.toLowerCase() === `<${messageId!.replace(/^<|>$/g, '')}>`.toLowerCase() ? email : undefined;
}

/**
 * The email and recipient a report is about: by its VERP address when it came to one (whose signature
 * names the email, in whichever project), else by Message-ID, among the emails of `projects`.
 */
async function matchReport(ctx: Context, report: Report, bounceAddress: string | undefined, projects: ReadonlySet<string>): Promise<Match | string> {
  if (bounceAddress !== undefined) {
    const token = readBounceAddress(bounceAddress);
    const email = token && (await emails.findEmailById(ctx.db, token.emailId));
    if (!token || !email) return `no email of ours for ${bounceAddress}`;
    const recipients = (await emails.findRecipients(ctx.db, email.id)).map((r) => r.address);
    const signed = signedRecipient(verpKey(ctx.secret), email.id, token.signature, recipients);
    return signed ? { email, recipients, signed } : `the token of ${bounceAddress} does not verify`;
  }
  const email = await emailByMessageId(ctx, report.originalMessageId);
  if (!email) return 'its original Message-ID is none of ours';
  if (!projects.has(email.project_id)) return 'its original Message-ID is no email of the projects it came to';
  return { email, recipients: (await emails.findRecipients(ctx.db, email.id)).map((r) => r.address), signed: undefined };
}

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * The outcomes of a matched report, on the recipients it names and no other (outcomes.ts reads each). A
 * VERP address names one recipient, and proves it: a DSN's block for that address speaks for it (or its
 * only block, when a forwarder rewrote the address). Matched by Message-ID, each block speaks for the
 * recipient it names, and a complaint for the recipient in Original-Rcpt-To, or the email's only one;
 * none of them is proof (a Message-ID is known to every recipient), and each says so.
 */
function outcomesOf(report: Report, match: Match): RecipientOutcome[] {
  const proven = match.signed !== undefined;
  const read: RecipientOutcome[] = [];
  if (report.kind === 'complaint') {
    const recipient = match.signed ?? match.recipients.find((r) => same(report.originalRecipient, r)) ?? (match.recipients.length === 1 ? match.recipients[0] : undefined);
    const outcome = recipient && complaintOutcome(report.feedbackType, recipient, proven);
    if (outcome) read.push(outcome);
  } else if (match.signed) {
    const signed = match.signed;
    const block = report.recipients.find((b) => same(b.address, signed)) ?? (report.recipients.length === 1 ? report.recipients[0] : undefined);
    const outcome = block && dsnOutcome(block, signed, true);
    if (outcome) read.push(outcome);
  } else {
    for (const block of report.recipients) {
      const recipient = match.recipients.find((r) => same(block.address, r));
      const outcome = recipient && dsnOutcome(block, recipient, false);
      if (outcome) read.push(outcome);
    }
  }
  return proven ? read : read.map((o) => ({ ...o, response: `${o.response} (unverified: matched by Message-ID, not by a VERP address)` }));
}

/**
 * A report (as the message reader read it) matched, ready to record; undefined (with the reason logged)
 * when it is to be dropped. Mail to a receiving domain (no `bounceAddress`) is about an email of the
 * `projects` of the domains it came to, or none.
 */
export async function prepareReport(
  ctx: Context,
  report: Report | undefined,
  bounceAddress: string | undefined,
  projects: ReadonlySet<string> = new Set(),
): Promise<((tx: Tx, at: string) => Promise<void>) | undefined> {
  const log = (reason: string) => ctx.log.info({ to: bounceAddress }, `inbound report ignored: ${reason}`);
  if (!report) {
    // Mail to a receiving domain that is no report is simply mail; only a bounce address expects one.
    if (bounceAddress !== undefined) log('not a delivery status notification or feedback report');
    return undefined;
  }
  const match = await matchReport(ctx, report, bounceAddress, projects);
  if (typeof match === 'string') return void log(match);
  const outcomes = outcomesOf(report, match);
  if (outcomes.length === 0) return void log(`nothing to record for email ${match.email.id}`);
  // A report delivered again records nothing: its receipt names it, and the VERP address it came to
  // (one report may come to several, each about its own recipient).
  const receipt = bounceAddress === undefined ? report.receipt : `${report.receipt} ${bounceAddress.toLowerCase()}`;
  return async (tx, at) => {
    if (!(await recordOnce(tx, 'mail', receipt, match.email, at, () => recordOutcomes(ctx, tx, match.email, outcomes, at)))) log(`report ${report.receipt} recorded already`);
  };
}

/** Takes a message sent to a VERP bounce address: its report recorded and committed, or dropped with a log line. */
export async function receiveReport(ctx: Context, raw: Buffer, bounceAddress: string): Promise<void> {
  const record = await prepareReport(ctx, await ctx.reader.report(raw), bounceAddress);
  if (record) await ctx.writer.transaction((tx) => record(tx, toTimestamp(ctx.clock.now())));
}
