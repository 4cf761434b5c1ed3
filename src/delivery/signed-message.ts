import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { composeMessage } from './mime-message.ts';
import type { DkimSigner, SigningDomain } from './dkim.ts';

/** The message as it leaves: composed once, and signed once when its sender's domain has a DKIM key. */
export async function buildMessage(
  dkim: DkimSigner,
  email: EmailRow,
  attachments: AttachmentRow[],
  date: Date,
  domain: SigningDomain | undefined,
): Promise<Buffer> {
  const composed = await composeMessage(email, attachments, date);
  return domain ? dkim.sign(composed, domain) : composed;
}
