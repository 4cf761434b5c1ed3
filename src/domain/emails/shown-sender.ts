import addressparser from 'nodemailer/lib/addressparser';
import type { Context } from '../../context.ts';
import { AppError, quoted } from '../../errors.ts';
import type { ParsedMessage } from '../receiving/read-message.ts';
import { normalizeAddress } from '../recipients/addresses.ts';
import { checkSenderDomain, type SenderKey } from '../sending-domains/sender-domain.ts';

// A submitted message is sent as it came, DKIM-signed for its From domain, so whatever a reader's mail
// client shows as its author must pass the rules From does: with a key bound to a domain, no other
// domain may appear there. Where clients differ (two From fields, several mailboxes), it is refused.

/** The fields named `name`, as the parser read them (ParsedMessage joins repeated ones with a line break). */
const fields = (parsed: ParsedMessage, name: string): string[] => (parsed.headers[name] === undefined ? [] : parsed.headers[name].split('\n'));

const refuse = (message: string) => new AppError('forbidden', message);

/**
 * Checks a submitted message's From and Sender against the rules on a sender's domain (the key's domain,
 * sending enabled, verified when required): one From field; one mailbox in it unless a Sender names who
 * sent it (RFC 5322); at most one Sender, of one mailbox. Each refusal names its header.
 */
export async function checkShownSenders(ctx: Context, parsed: ParsedMessage, key: SenderKey): Promise<void> {
  const from = fields(parsed, 'from');
  if (from.length > 1) throw refuse(`The message has ${from.length} From headers; one is allowed.`);
  const senderFields = fields(parsed, 'sender');
  if (senderFields.length > 1) throw refuse(`The message has ${senderFields.length} Sender headers; at most one is allowed.`);
  const sender = senderFields.length === 0 ? [] : addressparser(senderFields[0], { flatten: true });
  if (senderFields.length === 1 && sender.length !== 1) throw refuse('The Sender header must name one mailbox.');
  if (parsed.from.length > 1 && sender.length === 0) {
    throw refuse(`The From header names ${parsed.from.length} mailboxes; more than one needs a Sender header (RFC 5322).`);
  }
  const shown = [...parsed.from.map((m) => ['From', m.address] as const), ...sender.map((m) => ['Sender', m.address] as const)];
  for (const [header, value] of shown) {
    const address = normalizeAddress(value);
    if (!address) throw new AppError('validation_error', `The ${header} header's address ${quoted(value)} is not a valid email address.`);
    try {
      await checkSenderDomain(ctx, address, key);
    } catch (error) {
      throw error instanceof AppError ? new AppError(error.code, `The ${header} header: ${error.message}`) : error;
    }
  }
}
