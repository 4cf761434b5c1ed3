import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Context } from '../context.ts';
import { newId } from '../time/ids.ts';
import { receiveMessage } from '../domain/receiving/receive.ts';
import { receiveReport } from '../domain/bounces/reports.ts';
import { isReportAddress, receiveDmarcReports } from '../domain/dmarc/receive-reports.ts';
import { isBounceAddress, mayReceive } from '../domain/sending-domains/receiving-domain.ts';
import { asciiDomain, domainOf } from '../domain/recipients/addresses.ts';
import { connectionLimit, smtpError } from './connection-limit.ts';
import type { TlsPair } from './tls.ts';
import { traceHeader } from './trace-header.ts';
import { messageReader } from './data-reader.ts';
import { asReply, baseOptions, listen, logConnectionErrors, type SmtpListener } from './smtp-listener.ts';

// The inbound SMTP server (MX): takes mail for the domains that receive, bounce and complaint reports
// sent to VERP bounce addresses, and DMARC reports sent to a domain's report address, nothing else (no
// relay, no AUTH). A message is answered 250 only once it is committed (receive.ts, bounces/reports.ts,
// dmarc/receive-reports.ts); before that, any failure is a 4xx and the sender tries again.

export function listenInbound(ctx: Context, tls: Pick<TlsPair, 'key' | 'cert'>): Promise<SmtpListener> {
  const { inbound, mailHostname } = ctx.config;
  const limit = connectionLimit(inbound.maxClientConnections, () => ctx.instruments.smtpSessions.inc({ server: 'inbound' }));
  const read = messageReader(ctx.config.smtpData, (state, by) => ctx.instruments.smtpLargeMessages.inc({ server: 'inbound', state }, by));

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

  async function receive(data: Buffer | undefined, session: SMTPServerSession): Promise<string> {
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
    // Mail to a DMARC report address is read for reports; one that holds none is kept as mail.
    const reportAddresses: string[] = [];
    for (const address of envelope.to) if (!bounces.has(address) && (await isReportAddress(ctx, address))) reportAddresses.push(address);
    const read = reportAddresses.length > 0 && (await receiveDmarcReports(ctx, raw, reportAddresses));
    const taken = new Set([...bounces, ...(read ? reportAddresses : [])]);
    const mailboxes = envelope.to.filter((address) => !taken.has(address));
    if (mailboxes.length > 0) await receiveMessage(ctx, id, raw, { ...envelope, to: mailboxes });
    return `2.0.0 OK ${id}`;
  }

  const server: SMTPServer = new SMTPServer({
    ...baseOptions(mailHostname),
    key: tls.key,
    cert: tls.cert,
    size: inbound.maxMessageBytes,
    authOptional: true,
    disabledCommands: ['AUTH'],
    onConnect: (session, callback) => limit.onConnect(session, callback),
    onClose: (session) => limit.onClose(session),
    onRcptTo: (address, session, callback) =>
      void onRcptTo(address.address, session).then(() => callback(), (error) => callback(asReply(ctx, error, 'checking a recipient'))),
    onData: (stream, session, callback) =>
      void read(server, stream, session, (data) => receive(data, session)).then((reply) => callback(null, reply), (error) => callback(asReply(ctx, error, 'receiving a message'))),
  });
  return listen(server, inbound.port!, inbound.host, logConnectionErrors(ctx, 'inbound SMTP'));
}
