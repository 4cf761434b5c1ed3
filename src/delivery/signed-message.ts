import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { composeMessage } from './mime-message.ts';
import type { DkimSigner, SigningDomain } from './dkim.ts';

/** What a message is made from: an email's fields and attachments, or the MIME source it was submitted as. */
export type MessageContent = { email: EmailRow; attachments: AttachmentRow[]; date: Date } | { source: Buffer };

/** The message as it leaves: composed once (a submitted one is sent as it is), and signed once when its sender's domain has a DKIM key. */
export async function buildMessage(dkim: DkimSigner, content: MessageContent, domain: SigningDomain | undefined): Promise<Buffer> {
  const message = 'source' in content ? content.source : await composeMessage(content.email, content.attachments, content.date);
  return domain ? dkim.sign(message, domain) : message;
}
