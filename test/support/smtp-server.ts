// A real SMTP server (npm smtp-server) for tests: it records every message it accepts, parsed with
// mailparser, and can refuse recipients or messages the way a relay would.
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: Buffer;
  parsed: ParsedMail;
  /** Whether the session ran over TLS (STARTTLS or implicit). */
  secure: boolean;
  /** The user the client authenticated as, if any. */
  user: string | undefined;
}

/** A reply to refuse with: `{ code: 450, message: '4.2.0 try later' }`. */
export interface Refusal {
  code: number;
  message: string;
}

export interface TestSmtpServer {
  port: number;
  url: string;
  messages: ReceivedMessage[];
  /** Decide per recipient at RCPT TO; undefined accepts. A promise holds the reply until it settles. */
  onRecipient: (address: string) => Refusal | undefined | Promise<Refusal | undefined>;
  /** Decide per message at the end of DATA; undefined accepts. A promise holds the reply until it settles. */
  onMessage: (message: ReceivedMessage) => Refusal | undefined | Promise<Refusal | undefined>;
  /** The text of the 250 after DATA (`Ok: queued as <id>`, as a provider's relay names the message); undefined: smtp-server's. */
  answer: (message: ReceivedMessage) => string | undefined;
  /** Milliseconds to wait before answering DATA, to keep sends in flight. */
  delayMs: number;
  /** Client connections open now. */
  connections(): number;
  close(): Promise<void>;
}

const refuse = (refusal: Refusal) => Object.assign(new Error(refusal.message), { responseCode: refusal.code });

/** `listen` picks the address (several servers may share a port on 127.0.0.x, as MX hosts do). */
export async function startSmtpServer(
  options: Partial<SMTPServerOptions> = {},
  listen: { host?: string; port?: number } = {},
): Promise<TestSmtpServer> {
  const sink: TestSmtpServer = {
    port: 0,
    url: '',
    messages: [],
    onRecipient: () => undefined,
    onMessage: () => undefined,
    answer: () => undefined,
    delayMs: 0,
    connections: () => 0,
    close: async () => {},
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      void Promise.resolve(sink.onRecipient(address.address)).then((refusal) => callback(refusal ? refuse(refusal) : undefined));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => void received());
      const received = async () => {
        const raw = Buffer.concat(chunks);
        const message: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          parsed: await simpleParser(raw),
          secure: session.secure,
          user: session.user as string | undefined,
        };
        if (sink.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, sink.delayMs));
        const refusal = await sink.onMessage(message);
        if (refusal) return callback(refuse(refusal));
        sink.messages.push(message);
        callback(null, sink.answer(message));
      };
    },
    ...options,
  });
  // A client killed mid-session (the crash tests) resets its connection: not the server's failure.
  server.on('error', (error: Error & { code?: string }) => {
    if (error.code !== 'ECONNRESET') throw error;
  });
  const host = listen.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(listen.port ?? 0, host, resolve));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.url = `smtp://${host}:${sink.port}`;
  sink.connections = () => server.connections.size;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
