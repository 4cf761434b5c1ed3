import { isoTime, toTimestamp } from '../clock.ts';
import type { Context } from '../context.ts';
import { simulatedOutcome } from '../delivery/test-addresses.ts';
import { classify, eventsOf, type Verdict } from '../delivery/outcomes.ts';
import { DeliveryError } from '../delivery/smtp-send.ts';
import { domainOf, parseMailbox } from '../domain/recipients/addresses.ts';
import { findEmailWithBody } from '../domain/emails/emails.ts';
import { recordEvents, type EmailState } from '../domain/events/email-events.ts';
import { refusedAtSend } from '../domain/recipients/policy.ts';
import { bounceAddress, verpKey } from '../domain/bounces/verp.ts';
import { suppress } from '../domain/suppressions/suppressions.ts';
import { trackingFor, tracks } from '../domain/tracking/tracked-html.ts';
import { countSent, dailyAllowance, type DailyAllowance } from '../domain/sending-domains/daily-limit.ts';
import type { DomainRow } from '../store/domains.ts';
import type { OutgoingMessage } from '../delivery/transports.ts';
import type { MessageContent } from '../delivery/signed-message.ts';
import * as emails from '../store/emails.ts';
import type { EmailRow } from '../store/emails.ts';
import type { Job } from '../domain/jobs.ts';
import { completeHeldJob, completeJob, postponeHeldJob, retryHeldJob } from '../store/jobs.ts';
import { backoffMs } from './runner.ts';

/** Attachments (or a submitted source) over this many bytes make an email large (see ctx.largeMessages). */
const LARGE_MESSAGE = 1024 * 1024;

/** Recipients still waiting for a delivery attempt. */
const PENDING = new Set(['queued', 'scheduled', 'delivery_delayed']);

/**
 * One recipient's verdict in this attempt, with the answer it got; `refused`: not sent at all (the
 * recipient policy: failed, or suppressed), its events all in `after`; `throttled`: not sent now, its
 * destination's budget (delivery/throttle.ts) has a slot at `until`, and nothing is recorded of it.
 */
interface Outcome {
  address: string;
  verdict: Verdict | 'refused' | 'throttled';
  until?: number;
  /** Events around the verdict's own: a test address's simulated story, or a refusal's. */
  before?: EmailState[];
  after?: EmailState[];
  response: string;
  /** A real server's answer (not a test address's): a bounce puts the address on the suppression list. */
  real?: boolean;
  /** Throttled because its server cannot be reached (delivery/breaker.ts): recorded delivery_delayed once. */
  paused?: boolean;
}

function eventsFor(outcome: Outcome, exhausted: boolean): EmailState[] {
  const own = outcome.verdict === 'refused' || outcome.verdict === 'throttled' ? [] : eventsOf(outcome.verdict, exhausted);
  return [...(outcome.before ?? []), ...own, ...(outcome.after ?? [])];
}

/**
 * Delivers one email to its pending recipients: the recipient policy (the suppression list, and the
 * topic rules again for mail that waited), Resend's test addresses simulated, the sending domain's
 * daily limit applied, the rest handed to the transport (which may hold some back: throttle.ts), then every outcome and the job's end (or its retry) recorded in
 * one transaction. A crash before that commit repeats this one SMTP transaction, with the same
 * Message-ID; it never loses it.
 */
export async function sendEmailTask(ctx: Context, job: Job<'send-email'>): Promise<void> {
  const { email_id: emailId } = job.payload;
  const email = await findEmailWithBody(ctx, emailId);
  const pending = email ? (await emails.findRecipients(ctx.db, emailId)).filter((r) => PENDING.has(r.status)) : [];
  if (!email || pending.length === 0) return completeJob(ctx.db, job.id);

  const outcomes: Outcome[] = [];
  const real: string[] = [];
  const refused = await refusedAtSend(ctx, email, pending.map((r) => r.address));
  for (const { address } of pending) {
    const simulated = simulatedOutcome(address);
    const refusal = refused.get(address);
    if (refusal) outcomes.push({ address, verdict: 'refused', after: [refusal.state], response: refusal.reason });
    else if (simulated) outcomes.push({ address, verdict: classify(simulated.answer), before: simulated.before, after: simulated.after, response: simulated.answer.response });
    else real.push(address);
  }
  const from = parseMailbox(email.from, 'from').address;
  const domain = await ctx.domains.find(domainOf(from));
  // A sending domain's daily cap: the recipients over it wait for the next UTC day. Capture sends nothing.
  const allowance = ctx.transport.kind === 'capture' ? undefined : await dailyAllowance(ctx, domain);
  if (allowance && real.length > allowance.remaining) {
    const response = `Held by the daily limit of ${domain!.name}`;
    for (const address of real.splice(allowance.remaining)) outcomes.push({ address, verdict: 'throttled', until: allowance.nextDay, response });
  }
  const sent = real.length > 0 || ctx.transport.kind === 'capture' ? await deliver(ctx, email, from, domain, real) : undefined;
  if (sent) outcomes.push(...sent.outcomes);
  const delayed = new Set(pending.filter((r) => r.status === 'delivery_delayed').map((r) => r.address));
  await recordOutcomes(ctx, job, email, outcomes, sent?.raw, allowance, delayed);
}

/**
 * Composes the message once (or takes the source it was submitted as), signs it with the DKIM key of
 * the sender's domain when that is a Mailroom domain, and hands it to the transport for `to`: what
 * came of each recipient, by position, and the message sent (kept with the outcomes, in every mode).
 * Each recipient gets an SMTP transaction of its own, with its own VERP envelope sender
 * (bounces/verp.ts), so that a later bounce names it; capture mode sends none. A large email waits for
 * a turn first (ctx.largeMessages): composing and sending it costs several times its size in memory.
 * A domain that tracks opens or clicks gets a message per recipient, with its own tracking URLs.
 */
async function deliver(ctx: Context, email: EmailRow, from: string, domain: DomainRow | undefined, to: string[]): Promise<{ outcomes: Outcome[]; raw: Buffer }> {
  const bytes = await emails.contentBytes(ctx.db, email.id);
  const large = (bytes.source ?? bytes.attachments) > LARGE_MESSAGE;
  if (large) await ctx.largeMessages.acquire();
  try {
    const content = await messageContent(ctx, email, bytes);
    // A message submitted whole is sent as it is: tracking does not apply to it.
    const tracked = tracks(domain) && email.html !== null && to.length > 0 && !('source' in content);
    const raws = tracked
      ? await ctx.composer.buildTracked(content, domain, to.map((address) => trackingFor(domain, ctx.config.publicUrl, email.id, address)))
      : [await ctx.composer.build(content, domain)];
    // Kept with the outcomes: the message sent, the first recipient's when each has its own.
    const raw = raws[0]!;
    const message = { emailId: email.id, envelopeFrom: from, raw, domain };
    if (ctx.transport.kind === 'capture') {
      if (!tracked) return { outcomes: await sendTo(ctx, { ...message, to }), raw };
      const sends = to.map((address, i) => sendTo(ctx, { ...message, raw: raws[i]!, to: [address] }));
      return { outcomes: (await Promise.all(sends)).flat(), raw };
    }
    // Bounces go to the return-path subdomain of the sender's Mailroom domain (its records name this
    // server), else to MAILROOM_BOUNCE_DOMAIN.
    const host = domain ? `${domain.custom_return_path}.${domain.name}` : ctx.config.bounceDomain;
    const key = verpKey(ctx.secret);
    const sends = to.map((address, i) =>
      sendTo(ctx, { ...message, raw: raws[tracked ? i : 0]!, envelopeFrom: bounceAddress(key, email.id, address, host), to: [address] }),
    );
    return { outcomes: (await Promise.all(sends)).flat(), raw };
  } finally {
    if (large) ctx.largeMessages.release();
  }
}

/** What the message is made of: the source an email was submitted as, else its fields and attachments. */
async function messageContent(ctx: Context, email: EmailRow, bytes: { attachments: number; source: number | null }): Promise<MessageContent> {
  const source = bytes.source === null ? undefined : await emails.findSource(ctx.db, email.id);
  if (source) return { source };
  const attachments = bytes.attachments > 0 ? await emails.findAttachments(ctx.db, email.id) : [];
  return { email, attachments, date: new Date(ctx.clock.now()) };
}

/** One SMTP transaction: what came of each recipient of `message`. */
async function sendTo(ctx: Context, message: OutgoingMessage): Promise<Outcome[]> {
  const { to } = message;
  try {
    const result = await ctx.transport.send(message);
    return to.map((address, i) => {
      const answer = result.recipients[i]!;
      if (answer.throttledUntil !== undefined) return { address, verdict: 'throttled', until: answer.throttledUntil, response: answer.response };
      if (answer.pausedUntil !== undefined) return { address, verdict: 'throttled', until: answer.pausedUntil, response: answer.response, paused: true };
      return { address, verdict: classify(answer), response: answer.accepted ? result.response : answer.response, real: true };
    });
  } catch (error) {
    if (!(error instanceof DeliveryError)) throw error;
    const verdict = classify({ accepted: false, code: error.code });
    return to.map((address) => ({ address, verdict, response: error.response, real: true }));
  }
}

/**
 * Records the attempt: each recipient's events (through the event seam), the message sent, and the
 * job's end or its next run, in one transaction, and only while this worker still holds the job: one
 * stopping at its timeout hands back the jobs it has not finished (runner.ts), and another worker may
 * be sending this one already. The job runs again at its backoff when someone was deferred and
 * attempts remain (recipients throttled meanwhile go then too); else, when someone was throttled,
 * once the first of their destinations has a slot, the attempt given back (a throttle is ours, not a
 * failure); else it ends. A throttled recipient records nothing and stays pending, but one whose
 * server cannot be reached records delivery_delayed once; the messages that went to a server count
 * towards the sending domain's daily limit, if it has one.
 */
async function recordOutcomes(
  ctx: Context,
  job: Job<'send-email'>,
  email: EmailRow,
  outcomes: Outcome[],
  raw: Buffer | undefined,
  allowance: DailyAllowance | undefined,
  delayed: Set<string>,
): Promise<void> {
  const emailId = email.id;
  const exhausted = job.attempts >= job.max_attempts;
  const attempted = outcomes.filter((o) => o.verdict !== 'throttled');
  const groups = attempted.map((o) => ({ recipient: o.address, types: eventsFor(o, exhausted), response: o.response }));
  for (const o of outcomes) if (o.paused && !delayed.has(o.address)) groups.push({ recipient: o.address, types: ['delivery_delayed'], response: o.response });
  for (const g of groups) ctx.deliveryLog.record({ email: emailId, recipient: g.recipient, outcome: g.types.at(-1)!, response: g.response, attempt: job.attempts });
  // Logged, not recorded: the summary shows how much is held back, and why.
  for (const o of outcomes) if (o.verdict === 'throttled') ctx.deliveryLog.record({ email: emailId, recipient: o.address, outcome: 'throttled', response: o.response, attempt: job.attempts });
  const deferral = attempted.find((o) => o.verdict === 'deferred');
  const throttledUntil = Math.min(...outcomes.map((o) => o.until ?? Infinity));
  const now = ctx.clock.now();
  await ctx.writer.transaction(async (tx) => {
    const held =
      deferral && !exhausted
        ? await retryHeldJob(tx, job.id, job.locked_by!, now + backoffMs(job.attempts), deferral.response)
        : throttledUntil < Infinity
          ? await postponeHeldJob(tx, job.id, job.locked_by!, throttledUntil)
          : await completeHeldJob(tx, job.id, job.locked_by!);
    if (!held) return;
    const at = toTimestamp(now);
    await recordEvents(ctx, tx, email, groups, at);
    // The message sent: none was when every recipient it was made for is throttled.
    if (raw && !(outcomes.some((o) => o.verdict === 'throttled') && !outcomes.some((o) => o.real))) await emails.saveSentMessage(tx, emailId, raw, at);
    if (allowance) await countSent(tx, allowance, attempted.filter((o) => o.real).length);
    for (const o of outcomes) if (o.real && o.verdict === 'bounced') await suppress(ctx, tx, { email: o.address, origin: 'bounce', sourceId: emailId }, at);
    ctx.writer.afterCommit(tx, () => observeLatency(ctx, email, outcomes, now));
  });
}

/** Each real answer's time since the email was accepted, or was due if scheduled (a deferral's too). */
function observeLatency(ctx: Context, email: EmailRow, outcomes: Outcome[], now: number): void {
  const seconds = Math.max(0, (now - Date.parse(isoTime(email.scheduled_at ?? email.created_at))) / 1000);
  for (const o of outcomes) if (o.real && o.verdict !== 'refused') ctx.instruments.deliveryLatency.observe({ outcome: o.verdict }, seconds);
}
