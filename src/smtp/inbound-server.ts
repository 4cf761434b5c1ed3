import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Context } from '../context.ts';
import { newId } from '../ids.ts';
import { createSemaphore } from '../semaphore.ts';
import { receiveMessage } from '../domain/receiving/receive.ts';
import { receiveReport } from '../domain/bounces/reports.ts';
import { isBounceAddress, mayReceive } from '../domain/sending-domains/receiving-domain.ts';
import { asciiDomain, domainOf } from '../domain/recipients/addresses.ts';
import { connectionLimit, smtpError } from './connection-limit.ts';
import type { TlsPair } from './tls.ts';
import { traceHeader } from './trace-header.ts';

// The inbound SMTP server (MX): takes mail for the domains that receive, and bounce and complaint
// reports sent to VERP bounce addresses, nothing else (no relay, no AUTH). A message is answered 250
// only once it is committed (receive.ts, bounces/reports.ts); before that, any failure is a 4xx and
// the sender tries again.

export interface SmtpListener {
  address(): AddressInfo;
  /** Stops taking connections and waits (up to a bound) for those open to finish. */
  close(): Promise<void>;
}

/** The SMTP server's idle limit per command, and how long a stop waits for open connections. */
const SOCKET_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 10_000;
/** Connections at once, from every client. */
const MAX_CLIENTS = 500;

/** Messages over 1 MB read and stored at once: each costs a few times its size in memory until committed. */
const LARGE_BYTES = 1024 * 1024;
const MAX_LARGE_MESSAGES = 2;

/**
 * Reads DATA whole, or reports that it went over the size limit (read to the end all the same). Past
 * 1 MB, reading waits (the client with it: TCP pushes back) for `whenLarge` to give the message a turn.
 */
function readData(stream: SMTPServerDataStream, whenLarge: () => Promise<void>): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      if (stream.sizeExceeded) return;
      chunks.push(chunk);
      if (bytes < LARGE_BYTES && (bytes += chunk.length) >= LARGE_BYTES) {
        stream.pause();
        whenLarge().then(() => stream.resume(), reject);
      }
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(stream.sizeExceeded ? undefined : Buffer.concat(chunks)));
  });
}

export function listenInbound(ctx: Context, tls: Pick<TlsPair, 'key' | 'cert'>): Promise<SmtpListener> {
  const { inbound, mailHostname } = ctx.config;
  const limit = connectionLimit(inbound.maxClientConnections);
  const large = createSemaphore(MAX_LARGE_MESSAGES);

  async function onRcptTo(address: string, session: SMTPServerSession): Promise<void> {
    if (session.envelope.rcptTo.length >= inbound.maxRecipients) {
      throw smtpError(452, `4.5.3 Too many recipients: at most ${inbound.maxRecipients} per message`);
    }
    if (await isBounceAddress(ctx, address)) return;
    const domain = asciiDomain(domainOf(address));
    if (!domain || !(await mayReceive(ctx, domain))) {
      throw smtpError(550, `5.7.1 Relaying denied: ${domain || 'this address'} does not receive mail here`);
    }
  }

  async function onData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    let [holding, done] = [false, false];
    // A turn granted after the message ended (the client left while it waited) is handed on at once.
    const whenLarge = async () => {
      await large.acquire();
      if (done) large.release();
      else holding = true;
    };
    try {
      return await receive(stream, session, whenLarge);
    } finally {
      done = true;
      if (holding) large.release();
    }
  }

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession, whenLarge: () => Promise<void>): Promise<string> {
    const data = await readData(stream, whenLarge);
    if (!data) throw smtpError(552, `5.3.4 Message too big: at most ${inbound.maxMessageBytes} bytes`);
    const id = newId();
    const envelope = {
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      to: session.envelope.rcptTo.map((r) => r.address),
      clientAddress: session.remoteAddress,
      helo: session.hostNameAppearsAs,
    };
    const raw = Buffer.concat([Buffer.from(traceHeader({ id, session, by: mailHostname, at: new Date(ctx.clock.now()) })), data]);
    // Mail to a bounce address is a report, recorded and never stored as received mail.
    const bounces = new Set<string>();
    for (const address of envelope.to) if (await isBounceAddress(ctx, address)) bounces.add(address);
    for (const address of bounces) await receiveReport(ctx, raw, address);
    const mailboxes = envelope.to.filter((address) => !bounces.has(address));
    if (mailboxes.length > 0) await receiveMessage(ctx, id, raw, { ...envelope, to: mailboxes });
    return `2.0.0 OK ${id}`;
  }

  const server = new SMTPServer({
    name: mailHostname,
    banner: 'Mailroom',
    key: tls.key,
    cert: tls.cert,
    size: inbound.maxMessageBytes,
    authOptional: true,
    disabledCommands: ['AUTH'],
    disableReverseLookup: true,
    maxClients: MAX_CLIENTS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    closeTimeout: CLOSE_TIMEOUT_MS,
    logger: false,
    onConnect: (session, callback) => limit.onConnect(session, callback),
    onClose: (session) => limit.onClose(session),
    onRcptTo: (address, session, callback) =>
      onRcptTo(address.address, session).then(() => callback(), (error) => callback(asReply(ctx, error, 'checking a recipient'))),
    onData: (stream, session, callback) =>
      onData(stream, session).then((reply) => callback(null, reply), (error) => callback(asReply(ctx, error, 'receiving a message'))),
  });
  server.on('error', (error) => ctx.log.warn({ err: error }, 'inbound SMTP connection error'));

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(inbound.port, inbound.host, () => {
      server.off('error', reject);
      resolve({
        address: () => server.server.address() as AddressInfo,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

/** A refusal passes as it is; anything else is ours to log, and the sender's to retry (451). */
function asReply(ctx: Context, error: unknown, doing: string): Error {
  if ((error as { responseCode?: number }).responseCode) return error as Error;
  ctx.log.error({ err: error }, `inbound SMTP: failed ${doing}`);
  return smtpError(451, '4.3.0 Temporary failure, try again later');
}
