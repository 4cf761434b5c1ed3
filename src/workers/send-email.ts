import { toTimestamp } from '../clock.ts';
import type { Context } from '../context.ts';
import { simulatedOutcome } from '../delivery/test-addresses.ts';
import { DeliveryError, type SendResult } from '../delivery/smtp-send.ts';
import { domainOf, parseMailbox } from '../domain/addresses.ts';
import { findEmailWithBody } from '../domain/emails.ts';
import { blockedAtSend } from '../domain/topic-rules.ts';
import { newId } from '../ids.ts';
import * as emails from '../store/emails.ts';
import type { EmailRow } from '../store/emails.ts';
import { completeHeldJob, completeJob, retryHeldJob, type JobRow } from '../store/jobs.ts';
import { backoffMs } from './runner.ts';

/** Attachments over this many bytes make an email large (see ctx.largeMessages). */
const LARGE_ATTACHMENTS = 1024 * 1024;

/** Recipients still waiting for a delivery attempt. */
const PENDING = new Set(['queued', 'scheduled', 'delivery_delayed']);

interface Outcome {
  address: string;
  events: string[];
  response: string;
}

// Within one attempt, events are written worst outcome first, so the email's last_event (the type of
// its newest event) says "delivered" when anyone got it, and names the failure only when nobody did.
const RANK = ['failed', 'suppressed', 'bounced', 'delivery_delayed', 'sent', 'delivered', 'complained'];
const rank = (outcome: Outcome) => RANK.indexOf(outcome.events[outcome.events.length - 1]!);

/**
 * Sorts what the server said of each of `to` (by position) into outcomes: accepted -> sent and
 * delivered, 5xx -> bounced, else retry.
 */
function outcomesOf(to: string[], result: SendResult): { done: Outcome[]; deferred: Outcome[] } {
  const done: Outcome[] = [];
  const deferred: Outcome[] = [];
  for (const [i, address] of to.entries()) {
    const r = result.recipients[i]!;
    if (r.accepted) done.push({ address, events: ['sent', 'delivered'], response: result.response });
    else if (r.code !== undefined && r.code >= 500) done.push({ address, events: ['bounced'], response: r.response });
    else deferred.push({ address, events: ['bounced'], response: r.response });
  }
  return { done, deferred };
}

/**
 * Delivers one email to its pending recipients: compose once, sign once with the DKIM key of the
 * sender's domain when that is a Mailroom domain, simulate Resend's test addresses, hand the rest to
 * the transport, then record every outcome, the email's last_event and the job's end (or its retry)
 * in one transaction. A crash before that commit repeats this one SMTP transaction, with
 * the same Message-ID; it never loses it.
 */
export async function sendEmailTask(ctx: Context, job: JobRow): Promise<void> {
  const { email_id: emailId } = JSON.parse(job.payload) as { email_id: string };
  const email = await findEmailWithBody(ctx, emailId);
  const pending = email ? (await emails.findRecipients(ctx.db, emailId)).filter((r) => PENDING.has(r.status)) : [];
  if (!email || pending.length === 0) return completeJob(ctx.db, job.id);

  const done: Outcome[] = [];
  let deferred: Outcome[] = [];
  const real: string[] = [];
  const blocked = await blockedAtSend(ctx, email, pending.map((r) => r.address));
  for (const { address } of pending) {
    const simulated = simulatedOutcome(address);
    const reason = blocked.get(address);
    if (reason) done.push({ address, events: ['failed'], response: reason });
    else if (simulated) done.push({ address, ...simulated });
    else real.push(address);
  }
  if (real.length > 0 || ctx.transport.kind === 'capture') {
    const sorted = await deliver(ctx, email, real);
    done.push(...sorted.done);
    deferred = sorted.deferred;
  }

  const exhausted = job.attempts >= job.max_attempts;
  for (const outcome of deferred) outcome.events = [exhausted ? 'failed' : 'delivery_delayed'];
  const outcomes = [...done, ...deferred].sort((a, b) => rank(a) - rank(b));
  await recordOutcomes(ctx, job, emailId, outcomes, exhausted || deferred.length === 0);
}

/**
 * Composes the message once (signed with the DKIM key of the sender's domain when that is a Mailroom
 * domain) and hands it to the transport for `to`. An email with large attachments waits for a turn
 * first (ctx.largeMessages): composing and sending it costs several times its size in memory.
 */
async function deliver(ctx: Context, email: EmailRow, to: string[]): Promise<{ done: Outcome[]; deferred: Outcome[] }> {
  const bytes = await emails.attachmentBytes(ctx.db, email.id);
  const large = bytes > LARGE_ATTACHMENTS;
  if (large) await ctx.largeMessages.acquire();
  try {
    const from = parseMailbox(email.from, 'from').address;
    const domain = await ctx.domains.find(domainOf(from));
    const attachments = bytes > 0 ? await emails.findAttachments(ctx.db, email.id) : [];
    const raw = await ctx.composer.build(email, attachments, new Date(ctx.clock.now()), domain);
    try {
      return outcomesOf(to, await ctx.transport.send({ emailId: email.id, from, to, raw, domain }));
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      const outcomes = to.map((address) => ({ address, events: [error.permanent ? 'bounced' : 'delivery_delayed'], response: error.response }));
      return error.permanent ? { done: outcomes, deferred: [] } : { done: [], deferred: outcomes };
    }
  } finally {
    if (large) ctx.largeMessages.release();
  }
}

async function recordOutcomes(ctx: Context, job: JobRow, emailId: string, outcomes: Outcome[], finished: boolean) {
  for (const o of outcomes) {
    ctx.deliveryLog.record({ email: emailId, recipient: o.address, outcome: o.events.at(-1)!, response: o.response, attempt: job.attempts });
  }
  const now = ctx.clock.now();
  const at = toTimestamp(now);
  const events = outcomes.flatMap((o) =>
    o.events.map((type) => ({ id: newId(), email_id: emailId, type, recipient: o.address, response: o.response, created_at: at })),
  );
  await ctx.writer.transaction(async (tx) => {
    // Only while this worker holds the job: one stopping at its timeout hands back the jobs it has
    // not finished (runner.ts), and another worker may be sending this one already.
    const held = finished
      ? await completeHeldJob(tx, job.id, job.locked_by!)
      : await retryHeldJob(tx, job.id, job.locked_by!, now + backoffMs(job.attempts), outcomes.find((o) => o.events[0] === 'delivery_delayed')!.response);
    if (!held) return;
    await emails.insertEvents(tx, events);
    for (const o of outcomes) await emails.setRecipientStatus(tx, emailId, o.address, o.events[o.events.length - 1]!);
    if (events.length > 0) await emails.setLastEvent(tx, emailId, events[events.length - 1]!.type);
  });
}
