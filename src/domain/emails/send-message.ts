import type { Context } from '../../context.ts';
import { DeliveryError } from '../../delivery/smtp-send.ts';
import type { OutgoingMessage, Transport } from '../../delivery/transports.ts';
import type { DomainRow } from '../../store/domains.ts';
import * as emails from '../../store/emails.ts';
import type { EmailRow } from '../../store/emails.ts';
import { bounceAddress, verpKey } from '../bounces/verp.ts';
import type { EmailState } from '../events/email-events.ts';
import type { MessageContent } from '../messages/signed-message.ts';
import { classify, concernOf, type Concern, type Verdict } from '../outcomes/outcomes.ts';
import { trackingFor, tracks } from '../tracking/tracked-html.ts';

/** Attachments (or a submitted source) over this many bytes make an email large (see ctx.largeMessages). */
const LARGE_MESSAGE = 1024 * 1024;

/**
 * One recipient's verdict in this attempt, with the answer it got; `refused`: not sent at all (the
 * recipient policy: failed, or suppressed), its events all in `after`; `throttled`: not sent now, its
 * destination's budget (delivery/throttle.ts) has a slot at `until`, and nothing is recorded of it.
 */
export interface Sending {
  address: string;
  verdict: Verdict | 'refused' | 'throttled';
  until?: number;
  /** Events around the verdict's own: a test address's simulated story, or a refusal's. */
  before?: EmailState[];
  after?: EmailState[];
  response: string;
  /** A real server's answer (not a test address's): a bounce about the address (`concern`) puts it on the suppression list. */
  real?: boolean;
  /** Whom a refusal is about (outcomes.ts, concernOf). */
  concern?: Concern;
  /** Throttled because its server cannot be reached (delivery/breaker.ts): recorded delivery_delayed once. */
  paused?: boolean;
}

/**
 * Composes the message once (or takes the source it was submitted as), signs it with the DKIM key of
 * the sender's domain when that is a Mailroom domain, and hands it to the transport for `to`: what
 * came of each recipient, by position, and the message sent (kept with the outcomes, in every mode).
 * The envelope sender (envelopeSenders) decides the transactions: a VERP address is the recipient's
 * own, so each recipient gets a transaction of its own; with one envelope sender for all, they share
 * one. Capture mode sends none. A large email waits for a turn first (ctx.largeMessages): composing and
 * sending it costs several times its size in memory. A domain that tracks opens or clicks gets a
 * message per recipient, with its own tracking URLs.
 */
export async function sendMessage(ctx: Context, email: EmailRow, from: string, domain: DomainRow | undefined, to: string[]): Promise<{ outcomes: Sending[]; raw: Buffer }> {
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
    const message = { emailId: email.id, raw, domain };
    // The project's own relay, when it has one (projects/project-relays.ts); else the install's transport.
    const transport = await ctx.relays.transportFor(email.project_id);
    const senders = envelopeSenders(ctx, transport, email, from, domain, to);
    if (!tracked && !Array.isArray(senders)) return { outcomes: await sendTo(transport, { ...message, envelopeFrom: senders, to }), raw };
    const sends = to.map((address, i) =>
      sendTo(transport, { ...message, raw: raws[tracked ? i : 0]!, envelopeFrom: Array.isArray(senders) ? senders[i]! : senders, to: [address] }),
    );
    return { outcomes: (await Promise.all(sends)).flat(), raw };
  } finally {
    if (large) ctx.largeMessages.release();
  }
}

/**
 * MAIL FROM: in direct mode, and through a relay with RELAY_ENVELOPE_SENDER=verp, each recipient's VERP
 * address (bounces/verp.ts) so that a later bounce names it; bounces go to the return-path subdomain
 * of the sender's Mailroom domain (its records name this server), else to MAILROOM_BOUNCE_DOMAIN.
 * Through a relay otherwise, one address for all: the message's From (`sender`), or the one set (a
 * project's own relay, which the address set is not for, the From). Capture mode sends nothing anywhere: the From address.
 */
function envelopeSenders(ctx: Context, transport: Transport, email: EmailRow, from: string, domain: DomainRow | undefined, to: string[]): string | string[] {
  const { kind } = transport;
  const setting = ctx.config.relayEnvelopeSender;
  if (kind === 'capture') return from;
  if (kind === 'relay' && setting !== 'verp') return setting === 'sender' || transport !== ctx.transport ? from : setting.address;
  const host = domain ? `${domain.custom_return_path}.${domain.name}` : ctx.config.bounceDomain;
  const key = verpKey(ctx.secret);
  return to.map((address) => bounceAddress(key, email.id, address, host));
}

/** What the message is made of: the source an email was submitted as, else its fields and attachments. */
async function messageContent(ctx: Context, email: EmailRow, bytes: { attachments: number; source: number | null }): Promise<MessageContent> {
  const source = bytes.source === null ? undefined : await emails.findSource(ctx.db, email.id);
  if (source) return { source };
  const attachments = bytes.attachments > 0 ? await emails.findAttachments(ctx.db, email.id) : [];
  return { email, attachments, date: new Date(ctx.clock.now()) };
}

/** One SMTP transaction through `transport`: what came of each recipient of `message`. */
async function sendTo(transport: Transport, message: OutgoingMessage): Promise<Sending[]> {
  const { to } = message;
  try {
    const result = await transport.send(message);
    return to.map((address, i) => {
      const answer = result.recipients[i]!;
      if (answer.throttledUntil !== undefined) return { address, verdict: 'throttled', until: answer.throttledUntil, response: answer.response };
      if (answer.pausedUntil !== undefined) return { address, verdict: 'throttled', until: answer.pausedUntil, response: answer.response, paused: true };
      if (answer.accepted) return { address, verdict: 'delivered', response: result.response, real: true };
      return { address, verdict: classify(answer), response: answer.response, real: true, concern: concernOf(answer) };
    });
  } catch (error) {
    if (!(error instanceof DeliveryError)) throw error;
    const answer = { accepted: false, code: error.code, stage: error.stage, response: error.response };
    const [verdict, concern] = [classify(answer), concernOf(answer)];
    return to.map((address) => ({ address, verdict, response: error.response, real: true, concern }));
  }
}
