import type { SMTPServerSession } from 'smtp-server';

/** What a client may put in a header it does not own: host-name characters only, bounded. */
const hostText = (value: string) => value.replace(/[^A-Za-z0-9.:_[\]-]/g, '').slice(0, 255) || 'unknown';

/**
 * The `Received:` trace line an SMTP server adds to each message it takes (RFC 5321 4.4): who the
 * client said it was (EHLO, sanitised) and its address, this server, the protocol and the email's id.
 */
export function traceHeader({ id, session, by, at }: { id: string; session: SMTPServerSession; by: string; at: Date }): string {
  const protocol = session.secure ? 'ESMTPS' : 'ESMTP';
  const date = at.toUTCString().replace('GMT', '+0000');
  return `Received: from ${hostText(session.hostNameAppearsAs)} ([${hostText(session.remoteAddress)}])\r\n\tby ${by} (Mailroom) with ${protocol} id ${id};\r\n\t${date}\r\n`;
}
