import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { done, type Attempt, type Ending, type TaskResult } from '../../jobs/task.ts';
import { later } from '../../store/db.ts';
import * as emails from '../../store/emails.ts';
import type { EmailRow } from '../../store/emails.ts';
import { PENDING_STATES, type EmailState } from '../events/email-events.ts';
import { classify, eventsOf, type RecipientOutcome } from '../outcomes/outcomes.ts';
import { recordOutcomes } from '../outcomes/record-outcomes.ts';
import { recordRelayIds } from '../feedback/relay-ids.ts';
import { simulatedOutcome } from '../outcomes/test-addresses.ts';
import { domainOf, parseMailbox } from '../recipients/addresses.ts';
import { refusedAtSend } from '../recipients/policy.ts';
import { marketingPause } from '../deliverability/guards.ts';
import { giveBack, takeAllowance, type DailyAllowance } from '../sending-domains/daily-limit.ts';
import { findEmailWithBody } from './emails.ts';
import { sendMessage, type Sending } from './send-message.ts';

const PENDING = new Set<string>(PENDING_STATES);

function eventsFor(outcome: Sending, exhausted: boolean): EmailState[] {
  const own = outcome.verdict === 'refused' || outcome.verdict === 'throttled' ? [] : eventsOf(outcome.verdict, exhausted);
  return [...(outcome.before ?? []), ...own, ...(outcome.after ?? [])];
}

/**
 * The `send-email` task: delivers one email to its pending recipients. The recipient policy (the
 * suppression list, and the topic rules again for mail that waited), Resend's test addresses
 * simulated, the sending domain's daily limit applied, the rest handed to the transport
 * (send-message.ts, which may hold some back), then every outcome written with the job's end (or its
 * retry) in one transaction. A crash before that commit repeats this one SMTP transaction, with the
 * same Message-ID; it never loses it.
 */
export async function deliverEmail(ctx: Context, attempt: Attempt<'send-email'>): Promise<TaskResult> {
  const { email_id: emailId } = attempt.payload;
  const email = await findEmailWithBody(ctx, emailId);
  const pending = email ? (await emails.findRecipients(ctx.db, emailId)).filter((r) => PENDING.has(r.status)) : [];
  if (!email || pending.length === 0) return done();
  const from = parseMailbox(email.from, 'from').address;
  const domain = await ctx.domains.find(domainOf(from));
  // A broadcast's email waits while the guards pause its domain's marketing mail; transactional mail goes on.
  if (email.broadcast_id !== null && domain && (await marketingPause(ctx, domain))) return { ending: { end: 'postpone', until: ctx.clock.now() + ctx.config.guards.recheckMs } };

  const outcomes: Sending[] = [];
  const real: string[] = [];
  const refused = await refusedAtSend(ctx, email, pending.map((r) => r.address));
  for (const { address } of pending) {
    const simulated = simulatedOutcome(address);
    const refusal = refused.get(address);
    if (refusal) outcomes.push({ address, verdict: 'refused', after: [refusal.state], response: refusal.reason });
    else if (simulated) outcomes.push({ address, verdict: classify(simulated.answer), before: simulated.before, after: simulated.after, response: simulated.answer.response });
    else real.push(address);
  }
  // A sending domain's daily cap (warm-up or daily_limit): the recipients over it wait for the next UTC day. Capture sends nothing.
  const allowance = ctx.transport.kind === 'capture' ? undefined : await takeAllowance(ctx, domain, email.id, real.length);
  const held = allowance ? real.splice(allowance.granted) : [];
  const response = `Held by the ${allowance?.reason === 'warmup' ? 'warm-up' : 'daily limit'} of ${domain?.name}`;
  for (const address of held) outcomes.push({ address, verdict: 'throttled', until: allowance!.nextDay, response });
  const sent = real.length > 0 || ctx.transport.kind === 'capture' ? await sendMessage(ctx, email, from, domain, real) : undefined;
  if (sent) outcomes.push(...sent.outcomes);
  const delayed = new Set(pending.filter((r) => r.status === 'delivery_delayed').map((r) => r.address));
  const queued = new Set(pending.filter((r) => r.status === 'queued').map((r) => r.address));
  const waiting = allowance && { held, queued: held.filter((a) => queued.has(a)), allowance, response };
  return attemptResult(ctx, attempt, email, outcomes, sent?.raw, waiting, delayed);
}

/** The recipients a send held back for its domain's cap (those still `queued` become `scheduled`), and the slots it took. */
interface CapWait {
  held: string[];
  queued: string[];
  allowance: DailyAllowance;
  response: string;
}

/**
 * How the attempt ends, and what it writes. The job runs again at its backoff when someone was
 * deferred and attempts remain (recipients throttled meanwhile go then too); else, when someone was
 * throttled, once the first of their destinations has a slot, the attempt given back (a throttle is
 * ours, not a failure); else it is done. Written: each recipient's events and what follows from them
 * (outcomes/record-outcomes.ts), the message sent, the cap's slots it did not use given back, and
 * why the email waits. A throttled recipient records nothing and stays pending, but one whose server
 * cannot be reached records delivery_delayed once, and one held for the cap while queued, scheduled.
 */
function attemptResult(
  ctx: Context,
  attempt: Attempt<'send-email'>,
  email: EmailRow,
  outcomes: Sending[],
  raw: Buffer | undefined,
  waiting: CapWait | undefined,
  delayed: Set<string>,
): TaskResult {
  const attempted = outcomes.filter((o) => o.verdict !== 'throttled');
  const recorded: RecipientOutcome[] = attempted.map((o) => ({
    recipient: o.address,
    types: eventsFor(o, attempt.last),
    response: o.response,
    permanent: o.verdict === 'bounced' && o.concern === 'recipient',
    proven: o.real === true,
  }));
  for (const o of outcomes) if (o.paused && !delayed.has(o.address)) recorded.push({ recipient: o.address, types: ['delivery_delayed'], response: o.response, proven: false });
  for (const r of recorded) ctx.deliveryLog.record({ email: email.id, recipient: r.recipient, outcome: r.types.at(-1)!, response: r.response, attempt: attempt.number });
  // Held for the cap: the API shows the email `scheduled`, with why and until when (setWaiting).
  for (const address of waiting?.queued ?? []) recorded.push({ recipient: address, types: ['scheduled'], response: waiting!.response, proven: false });
  // Logged, not recorded: the summary shows how much is held back, and why.
  for (const o of outcomes) if (o.verdict === 'throttled') ctx.deliveryLog.record({ email: email.id, recipient: o.address, outcome: 'throttled', response: o.response, attempt: attempt.number });
  const deferral = attempted.find((o) => o.verdict === 'deferred');
  const throttledUntil = Math.min(...outcomes.map((o) => o.until ?? Infinity));
  const ending: Ending =
    deferral && !attempt.last ? { end: 'retry', error: deferral.response } : throttledUntil < Infinity ? { end: 'postpone', until: throttledUntil } : { end: 'done' };
  const now = ctx.clock.now();
  const write = async (tx: Parameters<NonNullable<TaskResult['write']>>[0]) => {
    const at = toTimestamp(now);
    await recordOutcomes(ctx, tx, email, recorded, at);
    // Their answers are not read: on PostgreSQL they go with the commit (store/postgres/write-behind.ts).
    const writes = later(tx);
    await recordRelayIds(ctx, writes, email.id, attempted);
    // The message sent: none was when every recipient it was made for is throttled.
    if (raw && !(outcomes.some((o) => o.verdict === 'throttled') && !outcomes.some((o) => o.real))) await emails.saveSentMessage(writes, email.id, raw, at);
    if (waiting) await giveBack(writes, waiting.allowance, attempted.filter((o) => o.real).length);
    const { allowance } = waiting ?? {};
    if (allowance && waiting!.held.length > 0) await emails.setWaiting(writes, email.id, { reason: allowance.reason, domainId: allowance.domainId, until: toTimestamp(allowance.nextDay) });
    else if (email.waiting_reason) await emails.setWaiting(writes, email.id, null);
    ctx.writer.afterCommit(tx, () => observeLatency(ctx, email, outcomes, now));
  };
  return { ending, write };
}

/** Each real answer's time since the email was accepted, or was due if scheduled (a deferral's too). */
function observeLatency(ctx: Context, email: EmailRow, outcomes: Sending[], now: number): void {
  const seconds = Math.max(0, (now - Date.parse(isoTime(email.scheduled_at ?? email.created_at))) / 1000);
  for (const o of outcomes) if (o.real && o.verdict !== 'refused') ctx.instruments.deliveryLatency.observe({ outcome: o.verdict }, seconds);
}
