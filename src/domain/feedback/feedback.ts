import { readFileSync } from 'node:fs';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { lastReceipt } from '../../store/feedback-receipts.ts';
import type { FeedbackSource } from '../outcomes/receipts.ts';
import { readMailgun } from './mailgun.ts';
import { readPostmark } from './postmark.ts';
import { recordFeedback, type FeedbackResult, type Notification } from './record-feedback.ts';
import { readSendgrid, sendgridKey, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './sendgrid.ts';
import { readSes } from './ses.ts';
import { snsFetcher } from './sns-fetch.ts';

// The providers a relay-mode user sends through report bounces, complaints and deliveries to their own
// webhooks: Mailroom takes them at POST /feedback/<provider>, each authenticated the way its provider
// signs, and records them as the reports it gets by mail (docs/relays.md).

export type Provider = Exclude<FeedbackSource, 'mail'>;

export const PROVIDERS: Provider[] = ['ses', 'postmark', 'mailgun', 'sendgrid'];

/** How each source is named to a person, and the setting that turns a provider's route on. */
export const SOURCE_NAMES: Record<FeedbackSource, string> = { ses: 'Amazon SES', postmark: 'Postmark', mailgun: 'Mailgun', sendgrid: 'SendGrid', mail: 'a report by mail' };
const SETTINGS: Record<Provider, string> = { ses: 'FEEDBACK_SES_TOPICS', postmark: 'FEEDBACK_POSTMARK_AUTH', mailgun: 'FEEDBACK_MAILGUN_KEY', sendgrid: 'FEEDBACK_SENDGRID_KEY' };

/** A request to a feedback route, as far as a reader needs it. */
export interface FeedbackRequest {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer | undefined;
}

export type Reader = (request: FeedbackRequest) => Promise<Notification[]> | Notification[];

const header = (request: FeedbackRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The readers of the providers the settings name (none for the others), each with what it keeps: SNS's certificates, SendGrid's key. */
export function feedbackReaders(ctx: Context): Partial<Record<Provider, Reader>> {
  const { ses, postmark, mailgun, sendgrid } = ctx.config.feedback;
  const readers: Partial<Record<Provider, Reader>> = {};
  if (ses) {
    const fetcher = snsFetcher(ses.caFile ? readFileSync(ses.caFile, 'utf8') : undefined);
    readers.ses = (request) => readSes(ctx, fetcher, ses, request.body);
  }
  if (postmark) readers.postmark = (request) => readPostmark(postmark, header(request, 'authorization'), request.body);
  if (mailgun) readers.mailgun = (request) => readMailgun(ctx, mailgun, request.body);
  if (sendgrid) {
    const key = sendgridKey(sendgrid);
    readers.sendgrid = (request) => readSendgrid(key, { signature: header(request, SIGNATURE_HEADER), timestamp: header(request, TIMESTAMP_HEADER) }, request.body);
  }
  return readers;
}

/** Takes a provider's post: verified and read by its reader, then recorded (record-feedback.ts). 404 when the provider is not configured. */
export async function receiveFeedback(ctx: Context, provider: Provider, reader: Reader | undefined, request: FeedbackRequest): Promise<FeedbackResult> {
  if (!reader) throw new AppError('not_found', `${SOURCE_NAMES[provider]} feedback is not configured: set ${SETTINGS[provider]}.`);
  return recordFeedback(ctx, provider, await reader(request));
}

/** Which source last reported on mail from a domain, and when; undefined when none has. */
export async function lastFeedback(ctx: Context, domain: string): Promise<{ source: string; at: string } | undefined> {
  const row = await lastReceipt(ctx.db, domain.toLowerCase());
  return row && { source: SOURCE_NAMES[row.source as FeedbackSource] ?? row.source, at: row.created_at };
}
