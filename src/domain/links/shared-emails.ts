import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, notFound, quoted } from '../../errors.ts';
import { parseDuration } from '../../time/durations.ts';
import * as sent from '../../store/emails.ts';
import * as received from '../../store/received-emails.ts';
import { downloadExpiry } from './download-links.ts';
import { getEmail } from '../emails/emails.ts';
import { listEmailAttachments } from '../emails/sent-attachments.ts';
import { getReceivedEmail, listReceivedAttachments } from '../receiving/received-emails.ts';
import { readShareToken, shareUrl, type ShareTarget } from './share-links.ts';

// POST /emails/:id/share and the page its link opens: a sent or received email, read-only, for anyone
// holding the link until it expires. What the page shows is chosen here: what the email's recipients
// saw (never Bcc, events, tags or headers).

/** The longest a link may live, and what it lives without `expires_in`: Resend's 48 hours. */
export const MAX_SHARE_MS = 48 * 3600_000;

const ALL = { limit: undefined, after: undefined, before: undefined };

/** How long a link lives: `expires_in`, a duration of more than nothing and at most 48 hours. */
function lifetimeOf(expiresIn: string | undefined): number {
  if (expiresIn === undefined) return MAX_SHARE_MS;
  const ms = parseDuration(expiresIn);
  if (ms === undefined) throw invalidField('expires_in', `${quoted(expiresIn)} is not a duration; use a number and a unit, such as "10m", "2 hours" or "1 day".`);
  if (ms <= 0) throw invalidField('expires_in', 'must be longer than zero.');
  if (ms > MAX_SHARE_MS) throw invalidField('expires_in', 'must be at most 48 hours.');
  return ms;
}

/** Whether `id` is a sent or a received email of the project's; not_found when neither. */
async function targetOf(ctx: Context, project: string, id: string): Promise<ShareTarget> {
  const emailId = id.toLowerCase();
  if (await sent.findEmailStatus(ctx.db, project, emailId)) return { kind: 'sent', emailId };
  if (await received.findReceivedEmail(ctx.db, project, emailId)) return { kind: 'received', emailId };
  throw notFound('Email');
}

/** POST /emails/:id/share: a link to the email that works until `expires_in` (48 hours by default) has passed. */
export async function shareEmail(ctx: Context, project: string, id: string, expiresIn: string | undefined) {
  const lifetime = lifetimeOf(expiresIn);
  const target = await targetOf(ctx, project, id);
  return { object: 'email' as const, id: target.emailId, url: shareUrl(ctx, target, ctx.clock.now() + lifetime) };
}

/** An email as its shared page shows it. */
export interface SharedEmail {
  subject: string;
  from: string;
  to: string[];
  cc: string[];
  reply_to: string[];
  created_at: string;
  html: string | null;
  text: string | null;
  /** Retention removed the html, text and attachments. */
  body_removed: boolean;
  /** When the link stops working (a stored timestamp). */
  link_expires_at: string;
  /** Each with a download link that dies with the share link, if not before. */
  attachments: { filename: string | null; content_type: string; size: number; download_url: string }[];
}

/** The email a share link shows; not_found when the token is altered or expired (readShareToken says which). */
export async function openSharedEmail(ctx: Context, token: string): Promise<SharedEmail> {
  const { kind, emailId, expiresAt } = readShareToken(ctx, token);
  const linksExpire = Math.min(expiresAt, downloadExpiry(ctx));
  // The token is the credential: the email's own project is the one to read it in.
  const project = (kind === 'sent' ? await sent.findEmailById(ctx.db, emailId) : await received.findReceivedStatusById(ctx.db, emailId))?.project_id;
  if (project === undefined) throw notFound('Email');
  const [email, attachments] =
    kind === 'sent'
      ? await Promise.all([getEmail(ctx, project, emailId), listEmailAttachments(ctx, project, emailId, ALL, linksExpire)])
      : await Promise.all([getReceivedEmail(ctx, project, emailId), listReceivedAttachments(ctx, project, emailId, ALL, linksExpire)]);
  return {
    subject: email.subject ?? '',
    from: email.from,
    to: email.to,
    cc: email.cc,
    reply_to: email.reply_to,
    // Received emails carry ISO 8601: one format for both.
    created_at: toTimestamp(Date.parse(isoTime(email.created_at))),
    html: email.html,
    text: email.text,
    body_removed: email.body_removed_at !== undefined,
    link_expires_at: toTimestamp(expiresAt),
    attachments: attachments.data.map(({ filename, content_type, size, download_url }) => ({ filename, content_type, size, download_url })),
  };
}
