import type { AttachmentRow, EmailRow } from '../../store/emails.ts';
import { trackHtml, type Tracking } from '../tracking/tracked-html.ts';
import { composeMessage, textPart } from '../../delivery/mime-message.ts';
import type { DkimSigner, SigningDomain } from '../../delivery/dkim.ts';

/** What a message is made from: an email's fields and attachments, or the MIME source it was submitted as. */
export type MessageContent = ComposedContent | { source: Buffer };

export type ComposedContent = { email: EmailRow; attachments: AttachmentRow[]; date: Date };

/** The message as it leaves: composed once (a submitted one is sent as it is), and signed once when its sender's domain has a DKIM key. */
export async function buildMessage(dkim: DkimSigner, content: MessageContent, domain: SigningDomain | undefined): Promise<Buffer> {
  const message = 'source' in content ? content.source : await composeMessage(content.email, content.attachments, content.date);
  return domain ? dkim.sign(message, domain) : message;
}

/**
 * The messages of an email whose domain tracks, one per recipient in `trackings`, each with that
 * recipient's tracked html and signed. The text part is the email's own, generated once.
 */
export async function buildTrackedMessages(
  dkim: DkimSigner,
  trackingKey: Buffer,
  content: ComposedContent,
  domain: SigningDomain,
  trackings: Tracking[],
): Promise<Buffer[]> {
  const { email, attachments, date } = content;
  const untracked = { ...email, text: textPart(email.html, email.text) ?? '' };
  const messages: Buffer[] = [];
  for (const tracking of trackings) {
    const html = email.html === null ? null : trackHtml(trackingKey, email.html, tracking);
    messages.push(await dkim.sign(await composeMessage(untracked, attachments, date, html), domain));
  }
  return messages;
}
