import type { SMTPServerSession } from 'smtp-server';

/** An SMTP refusal: the reply code smtp-server answers with, and its text (enhanced status first). */
export const smtpError = (responseCode: number, message: string): Error => Object.assign(new Error(message), { responseCode });

/**
 * At most `max` connections at once from one client address: the next is refused with 421 at
 * connect, and the count falls as connections close (refused ones were never counted). `accepted`
 * hears of each connection let in.
 */
export function connectionLimit(max: number, accepted: () => void = () => {}) {
  const open = new Map<string, number>();
  const counted = new Set<string>();
  return {
    onConnect(session: SMTPServerSession, callback: (error?: Error) => void): void {
      const address = session.remoteAddress;
      const count = open.get(address) ?? 0;
      if (count >= max) return callback(smtpError(421, `4.7.0 Too many connections from ${address}, try again later`));
      open.set(address, count + 1);
      counted.add(session.id);
      accepted();
      callback();
    },
    onClose(session: SMTPServerSession): void {
      if (!counted.delete(session.id)) return;
      const count = open.get(session.remoteAddress)! - 1;
      if (count === 0) open.delete(session.remoteAddress);
      else open.set(session.remoteAddress, count);
    },
  };
}
