import { isoTime, toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { newId } from '../../time/ids.ts';
import { addMetrics } from '../../store/email-metrics.ts';
import { insertReceivedEmail, type ReceivedAttachmentRow, type ReceivedEmailRow } from '../../store/received-emails.ts';
import { asBuffer } from '../../threads.ts';
import { prepareReport } from '../bounces/reports.ts';
import { logEvents, type NewEvent } from '../events/event-log.ts';
import { receivedRows } from '../metrics/rollup.ts';
import { UNSCOPED_PROJECT } from '../../store/projects.ts';
import type { Envelope } from './read-message.ts';

/** The `email.received` webhook: who and what, no body (the application fetches it). */
function receivedEvent(email: ReceivedEmailRow, attachments: ReceivedAttachmentRow[]): NewEvent {
  const { id, created_at, from, to, bcc, cc, received_for, message_id, subject } = email;
  return {
    project: UNSCOPED_PROJECT,
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
 * Takes a message the inbound SMTP server received: parses and authenticates it (message-reader.ts),
 * then commits its row, its bytes, its attachments, its `email.received` event (with the webhook
 * deliveries) and its count in the metrics rollup in one transaction, under `id`. A bounce or complaint report about one of our emails
 * (matched by the original Message-ID: bounces/reports.ts) is stored all the same, and recorded in
 * that transaction too. Resolves once committed: only then may the server answer 250.
 */
export async function receiveMessage(ctx: Context, id: string, raw: Buffer, envelope: Envelope): Promise<void> {
  const { attachments: parts, report: read, ...message } = await ctx.reader.read(raw, envelope);
  const email: ReceivedEmailRow = {
    ...message,
    id,
    created_at: toTimestamp(ctx.clock.now()),
    envelope_from: envelope.from,
    received_for: envelope.to,
    client_address: envelope.clientAddress,
    size: raw.length,
  };
  const attachments: ReceivedAttachmentRow[] = parts.map((a, position) => {
    const content = asBuffer(a.content);
    return { ...a, id: newId(), email_id: id, position, size: content.length, content };
  });
  const report = await prepareReport(ctx, read, undefined);
  await ctx.writer.transaction(async (tx) => {
    await insertReceivedEmail(tx, email, raw, attachments);
    await logEvents(ctx, tx, [receivedEvent(email, attachments)], email.created_at);
    await addMetrics(tx, receivedRows(UNSCOPED_PROJECT, email.received_for, email.created_at));
    await report?.(tx, email.created_at);
  });
}
