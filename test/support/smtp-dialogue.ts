// A raw SMTP client for what nodemailer does not show or do: each reply as the server sends it (the
// EHLO capabilities before and after STARTTLS), and a message written at the pace a test chooses.
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface Dialogue {
  /** The server's first reply. */
  greeting: string[];
  /** Sends `command` (a line, without CRLF; nothing when undefined) and resolves with the next whole reply's lines. */
  reply(command?: string): Promise<string[]>;
  /** Writes bytes as they are (message data). */
  write(bytes: string | Buffer): void;
  /** STARTTLS and the handshake (the self-signed certificate accepted); resolves once TLS is up. */
  starttls(): Promise<void>;
  /** Resolves once the server has closed the connection. */
  closed: Promise<void>;
  close(): void;
}

/**
 * Opens a connection to `port` of 127.0.0.1 (over TLS from the start when `secure`; from `localAddress`,
 * another address of 127.0.0.0/8, to be another client) and reads the greeting.
 */
export async function dialogue(port: number, { secure = false, localAddress = '127.0.0.1' } = {}): Promise<Dialogue> {
  const to = { port, host: '127.0.0.1', localAddress };
  let socket: Socket | TLSSocket = secure ? tlsConnect({ ...to, rejectUnauthorized: false }) : connect(to);
  let text = '';
  let waiting: ((lines: string[]) => void) | undefined;
  let ended = false;
  // A reply is whole once a line has a space after its code; a closed connection ends what is left.
  const deliver = () => {
    if (!waiting) return;
    const lines = text.split('\r\n');
    const last = lines.findIndex((line) => /^\d{3}(?: |$)/.test(line));
    if (last === -1 && !ended) return;
    const taken = last === -1 ? lines.filter((line) => line !== '') : lines.slice(0, last + 1);
    text = last === -1 ? '' : lines.slice(last + 1).join('\r\n');
    const resolve = waiting;
    waiting = undefined;
    resolve(taken);
  };
  const listen = (s: Socket | TLSSocket) => {
    s.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      deliver();
    });
  };
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const onClose = () => {
    ended = true;
    deliver();
    markClosed();
  };
  socket.on('close', onClose).on('error', () => {});
  listen(socket);
  const reply = (command?: string) =>
    new Promise<string[]>((resolve) => {
      waiting = resolve;
      if (command !== undefined) socket.write(`${command}\r\n`);
      deliver();
    });
  const greeting = await reply();
  return {
    greeting,
    reply,
    write: (bytes) => void socket.write(bytes),
    async starttls() {
      const ready = await reply('STARTTLS');
      if (!ready[0]?.startsWith('220')) throw new Error(`STARTTLS refused: ${ready.join(' / ')}`);
      const plain = socket;
      plain.removeAllListeners('data');
      plain.off('close', onClose);
      socket = await new Promise<TLSSocket>((resolve, reject) => {
        const secure = tlsConnect({ socket: plain, rejectUnauthorized: false }, () => resolve(secure)).once('error', reject);
      });
      socket.on('close', onClose).on('error', () => {});
      listen(socket);
    },
    closed,
    close: () => socket.destroy(),
  };
}
