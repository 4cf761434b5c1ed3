import type { SMTPServerSession } from 'smtp-server';
import { clientKey } from '../limits/client-key.ts';

/** An SMTP refusal: the reply code smtp-server answers with, and its text (enhanced status first). */
export const smtpError = (responseCode: number, message: string): Error => Object.assign(new Error(message), { responseCode });

/**
 * At most `max` connections at once from one client (an IPv6 /64 counting as one, clientKey): the next
 * is refused with 421 at connect, and the count falls as connections close (refused ones were never
 * counted). `accepted` hears of each connection let in.
 */
export function connectionLimit(max: number, accepted: () => void = () => {}) {
  const open = new Map<string, number>();
  /** The client each counted connection (by session id) counts against. */
  const counted = new Map<string, string>();
  return {
    onConnect(session: SMTPServerSession, callback: (error?: Error) => void): void {
      const client = clientKey(session.remoteAddress);
      const count = open.get(client) ?? 0;
      if (count >= max) return callback(smtpError(421, `4.7.0 Too many connections from ${client}, try again later`));
      open.set(client, count + 1);
      counted.set(session.id, client);
      accepted();
      callback();
    },
    onClose(session: SMTPServerSession): void {
      const client = counted.get(session.id);
      if (client === undefined) return;
      counted.delete(session.id);
      const count = open.get(client)! - 1;
      if (count === 0) open.delete(client);
      else open.set(client, count);
    },
  };
}
