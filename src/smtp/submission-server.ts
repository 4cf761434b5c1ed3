import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import type { Context } from '../context.ts';
import { hashToken } from '../domain/api-keys/api-keys.ts';
import { effectiveRateLimit } from '../domain/api-keys/rate-limits.ts';
import { MAX_ATTACHMENTS_BASE64 } from '../domain/emails/attachments.ts';
import { submitEmail } from '../domain/emails/submission.ts';
import { parseMailbox } from '../domain/recipients/addresses.ts';
import { authFailures } from '../limits/auth-failures.ts';
import { connectionLimit, smtpError } from './connection-limit.ts';
import { messageReader } from './data-reader.ts';
import { asReply, baseOptions, listen, logConnectionErrors, type SmtpListener } from './smtp-listener.ts';
import type { TlsPair } from './tls.ts';

// SMTP submission (RFC 6409), as Resend's: user `resend`, an API key as the password, then each
// message becomes an email through the same rules as POST /emails (domain/emails/submission.ts),
// answered 250 with its id only once it is committed. Each message counts as a request against its
// key's rate limit, the HTTP API's budget (ctx.rates), and is refused at MAIL FROM: before any of it
// is taken.

/** The username every client gives, as with Resend. */
export const SUBMISSION_USER = 'resend';
/** How long a wrong password waits for its 535: guessing is slow. */
const AUTH_FAILURE_DELAY_MS = 1000;
/** RCPT TO taken per message; the rule (at most 50 per email) answers at the end of DATA, so that no message goes out to only some. */
const MAX_RCPT = 1000;
/** A whole message, as Resend's SMTP takes it. */
const MAX_MESSAGE_BYTES = MAX_ATTACHMENTS_BASE64;

/** Who authenticated a session: the hash of its key, looked up again for each message (a deleted key stops at once). */
interface SessionUser {
  tokenHash: string;
}

/** The submission server: `listen` starts a listener (STARTTLS, or implicit TLS when `secure`); all share their limits. */
export function submissionServer(ctx: Context, tls: Pick<TlsPair, 'key' | 'cert'>): { listen(port: number, secure: boolean): Promise<SmtpListener> } {
  const { submission, mailHostname } = ctx.config;
  const limit = connectionLimit(submission.maxClientConnections, () => ctx.instruments.smtpSessions.inc({ server: 'submission' }));
  const failures = authFailures(submission.maxAuthFailures, () => ctx.clock.now());
  const read = messageReader(ctx.config.smtpData, (state, by) => ctx.instruments.smtpLargeMessages.inc({ server: 'submission', state }, by));
  const tooManyFailures = () => smtpError(421, '4.7.0 Too many failed authentication attempts from this address, try again later');

  async function onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<SessionUser> {
    if (failures.blocked(session.remoteAddress)) throw tooManyFailures();
    const tokenHash = hashToken(auth.password ?? '');
    const key = auth.username === SUBMISSION_USER ? await ctx.apiKeys.find(tokenHash) : undefined;
    if (!key) {
      failures.add(session.remoteAddress);
      await sleep(AUTH_FAILURE_DELAY_MS);
      throw smtpError(535, `5.7.8 Authentication failed: the username is "${SUBMISSION_USER}" and the password an API key`);
    }
    ctx.keyUsage.touch(key.id);
    return { tokenHash };
  }

  async function onMailFrom(session: SMTPServerSession): Promise<void> {
    // Only before STARTTLS, where AUTH is not offered (smtp-server asks for AUTH itself once it is).
    if (!session.user) throw smtpError(530, '5.7.0 Must issue a STARTTLS command first, then AUTH');
    const key = await ctx.apiKeys.find((session.user as SessionUser).tokenHash);
    // A deleted key is answered at the end of DATA, as when it goes during a message.
    const limit = key && (await effectiveRateLimit(ctx, key));
    if (!limit) return;
    const take = await ctx.rates.take(key.id, limit);
    if (take.allowed) return;
    const seconds = Math.ceil(take.resetMs / 1000);
    throw smtpError(
      450,
      `4.7.1 Rate limit exceeded for this API key: ${limit} ${limit === 1 ? 'message' : 'messages'} per second; try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}`,
    );
  }

  function onRcptTo(address: string, session: SMTPServerSession): void {
    if (session.envelope.rcptTo.length >= MAX_RCPT) throw smtpError(452, '4.5.3 Too many recipients');
    try {
      parseMailbox(address, 'RCPT TO');
    } catch (error) {
      throw smtpError(553, `5.1.3 ${(error as Error).message}`);
    }
  }

  async function submit(data: Buffer | undefined, session: SMTPServerSession): Promise<string> {
    if (!data) throw smtpError(552, `5.3.4 Message too big: at most ${MAX_MESSAGE_BYTES} bytes (40 MB) per email`);
    const key = await ctx.apiKeys.find((session.user as SessionUser).tokenHash);
    if (!key) throw smtpError(535, '5.7.8 The API key of this session was deleted');
    const { id } = await submitEmail(ctx, data, session.envelope.rcptTo.map((r) => r.address), key);
    return `2.0.0 OK ${id}`;
  }

  const server = (secure: boolean): SMTPServer => {
    const created: SMTPServer = new SMTPServer({
      ...baseOptions(mailHostname),
      secure,
      key: tls.key,
      cert: tls.cert,
      size: MAX_MESSAGE_BYTES,
      authMethods: ['PLAIN', 'LOGIN'],
      allowInsecureAuth: submission.allowInsecureAuth,
      onConnect: (session, callback) => {
        if (failures.blocked(session.remoteAddress)) return callback(tooManyFailures());
        // AUTH is neither offered nor taken before TLS: a client that saw it offered would send its key in clear.
        if (!session.secure && !submission.allowInsecureAuth) session.disabledCommands = ['AUTH'];
        limit.onConnect(session, callback);
      },
      onSecure: (_socket, session, callback) => {
        session.disabledCommands = undefined;
        callback();
      },
      onClose: (session) => limit.onClose(session),
      onAuth: (auth, session, callback) =>
        void onAuth(auth, session).then((user) => callback(null, { user }), (error) => callback(asReply(ctx, error, 'checking a password'))),
      onMailFrom: (_address, session, callback) =>
        void onMailFrom(session).then(() => callback(), (error) => callback(asReply(ctx, error, 'checking a rate limit'))),
      onRcptTo: (address, session, callback) => {
        try {
          onRcptTo(address.address, session);
          callback();
        } catch (error) {
          callback(asReply(ctx, error, 'checking a recipient'));
        }
      },
      onData: (stream, session, callback) =>
        void read(created, stream, session, (data) => submit(data, session)).then((reply) => callback(null, reply), (error) => callback(asReply(ctx, error, 'submitting a message'))),
    });
    return created;
  };

  return {
    listen(port, secure) {
      return listen(server(secure), port, submission.host, logConnectionErrors(ctx, 'SMTP submission'));
    },
  };
}
