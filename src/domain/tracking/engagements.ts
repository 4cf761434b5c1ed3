import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import * as emails from '../../store/emails.ts';
import { recordEngagement } from '../events/email-events.ts';
import { botReason } from './bots.ts';
import { isWebLink } from './html-rewriter.ts';
import { readTrackingToken, type TrackingClaims } from './tracking-tokens.ts';

// The open pixel and the click redirect. The signed token is the only credential. A token of ours
// always gets its answer (the image, the redirect), even when its email or recipient no longer
// exists or the recording fails: the link was ours, and the reader should not pay for it.

/** One fetch of a tracking URL, as the HTTP edge saw it. */
export interface TrackingFetch {
  token: string;
  method: string;
  ipAddress: string;
  userAgent: string | undefined;
  /** Its client is past MAILROOM_PUBLIC_RATE_LIMIT: answered as any other, not recorded. */
  unrecorded: boolean;
}

/** Records an open of the pixel; false when the token is not one of ours (404). */
export async function openPixel(ctx: Context, key: Buffer, fetch: TrackingFetch): Promise<boolean> {
  const claims = readTrackingToken(key, fetch.token, 'open');
  if (!claims) return false;
  if (!fetch.unrecorded) await record(ctx, claims, fetch);
  return true;
}

/** Records a click, and answers the link it stands for; undefined when the token is not one of ours (404). */
export async function followLink(ctx: Context, key: Buffer, fetch: TrackingFetch): Promise<string | undefined> {
  const claims = readTrackingToken(key, fetch.token, 'click');
  // Only http(s) links are ever signed; checked again so that no token can redirect anywhere else.
  if (claims?.kind !== 'click' || !isWebLink(claims.link)) return undefined;
  if (!fetch.unrecorded) await record(ctx, claims, fetch);
  return claims.link;
}

async function record(ctx: Context, claims: TrackingClaims, fetch: TrackingFetch): Promise<void> {
  const { emailId, recipient } = claims;
  try {
    const recipients = await emails.findRecipients(ctx.db, emailId);
    if (!recipients.some((r) => r.address === recipient)) return;
    const delivered = (await emails.listEvents(ctx.db, emailId)).findLast((e) => e.type === 'delivered' && (e.recipient === recipient || e.recipient === null));
    const now = ctx.clock.now();
    const bot = botReason({ method: fetch.method, userAgent: fetch.userAgent, deliveredAt: delivered && Date.parse(isoTime(delivered.created_at)), now });
    const engagement = {
      type: claims.kind === 'open' ? ('opened' as const) : ('clicked' as const),
      recipient,
      link: claims.kind === 'click' ? claims.link : undefined,
      bot,
      client: { ipAddress: fetch.ipAddress, userAgent: fetch.userAgent ?? '' },
    };
    await ctx.writer.transaction(async (tx) => {
      // Read in the transaction: last_event is raised only where the new state ranks higher.
      const email = await emails.findEmailById(tx, emailId);
      if (email) await recordEngagement(ctx, tx, email, engagement, toTimestamp(now));
    });
  } catch (error) {
    ctx.log.error({ err: error, emailId }, 'recording an open or a click failed');
  }
}
