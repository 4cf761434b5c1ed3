import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError, clip } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import { addMetrics } from '../../store/email-metrics.ts';
import { insertReceivedEmail, type ReceivedAttachmentRow, type ReceivedEmailRow } from '../../store/received-emails.ts';
import { asBuffer } from '../../threads.ts';
import { prepareReport } from '../bounces/reports.ts';
import { logEvents, type NewEvent } from '../events/event-log.ts';
import { receivedRows } from '../metrics/rollup.ts';
import { asciiDomain, domainOf } from '../recipients/addresses.ts';
import type { Envelope } from './read-message.ts';

/** The `email.received` webhook: who and what, no body (the application fetches it). */
function receivedEvent(email: ReceivedEmailRow, attachments: ReceivedAttachmentRow[]): NewEvent {
  const { project_id, id, created_at, from, to, bcc, cc, received_for, message_id, subject } = email;
  return {
    project: project_id,
    type: 'email.received',
    data: {
      email_id: id,
      created_at: isoTime(created_at),
      from,
      to,
      bcc,
      cc,
      received_for,
      message_id,
      subject,
      attachments: attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.content_type, content_disposition: a.content_disposition, content_id: a.content_id })),
    },
  };
}

/**
 * The envelope recipients by the project of their domain: mail received for a domain is its project's.
 * The server accepted each for its domain at RCPT; one removed since fails the message for now (451),
 * and the sender's retry is refused at RCPT for that address only.
 */
async function byProject(ctx: Context, recipients: string[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  for (const address of recipients) {
    const name = asciiDomain(domainOf(address));
    const project = name === undefined ? undefined : (await ctx.domains.find(name))?.project_id;
    if (project === undefined) throw new AppError('service_unavailable', `The domain of ${clip(address)} changed while the message came: try again.`);
    const group = groups.get(project) ?? [];
    group.push(address);
    groups.set(project, group);
  }
  return groups;
}

/**
 * Takes a message the inbound SMTP server received: parses and authenticates it (message-reader.ts),
 * then commits its row, its bytes, its attachments, its `email.received` event (with the webhook
 * deliveries) and its count in the metrics rollup in one transaction, under `id`. Its recipients'
 * domains decide its project; a message for the domains of several projects is one email in each, with
 * the recipients of that project only (the first under `id`, the others under ids of their own). A
 * bounce or complaint report about one of those projects' emails (matched by the original Message-ID:
 * bounces/reports.ts) is stored all the same, and recorded in that transaction too. Resolves once
 * committed: only then may the server answer 250.
 */
export async function receiveMessage(ctx: Context, id: string, raw: Buffer, envelope: Envelope): Promise<void> {
  const projects = await byProject(ctx, envelope.to);
  const { attachments: parts, report: read, ...message } = await ctx.reader.read(raw, envelope);
  const created_at = toTimestamp(ctx.clock.now());
  const copies = [...projects].map(([project, receivedFor], i) => {
    const emailId = i === 0 ? id : newId();
    const email: ReceivedEmailRow = {
      ...message,
      id: emailId,
      project_id: project,
      created_at,
      envelope_from: envelope.from,
      received_for: receivedFor,
      client_address: envelope.clientAddress,
      size: raw.length,
    };
    const attachments: ReceivedAttachmentRow[] = parts.map((a, position) => {
      const content = asBuffer(a.content);
      return { ...a, id: newId(), email_id: emailId, position, size: content.length, content };
    });
    return { email, attachments };
  });
  const report = await prepareReport(ctx, read, undefined, new Set(projects.keys()));
  await ctx.writer.transaction(async (tx) => {
    for (const { email, attachments } of copies) {
      await insertReceivedEmail(tx, email, raw, attachments);
      await logEvents(ctx, tx, [receivedEvent(email, attachments)], email.created_at);
      await addMetrics(tx, receivedRows(email.project_id, email.received_for, email.created_at));
    }
    await report?.(tx, created_at);
  });
}
