// A TCP proxy in front of PostgreSQL that counts, from the wire protocol itself, what a process asks of
// the database: round trips (each ReadyForQuery the server sends ends one) and statements (each simple
// Query, and each Execute of the extended protocol, several of which may share one round trip), and
// which statements they were (the text Parse or Query carried, cut short).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Counts {
  roundTrips: number;
  statements: number;
  /** Statements by their text's start. */
  byText: Map<string, number>;
}

export interface PgCounter {
  /** A URL like `url`, through the proxy. */
  url: string;
  /** What passed through so far. */
  counts(): Counts;
  close(): Promise<void>;
}

/**
 * Reads typed messages (a type byte, then a length that counts itself) from a stream, calling `seen`
 * with each type and body; `untyped` leading messages (the client's startup message) are skipped.
 */
function messages(seen: (type: number, body: Buffer) => void, untyped: number): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  let skip = untyped;
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      const typed = skip === 0 ? 1 : 0;
      if (buffered.length < typed + 4) break;
      const end = typed + buffered.readInt32BE(typed);
      if (buffered.length < end) break;
      if (typed) seen(buffered[0]!, buffered.subarray(5, end));
      else skip--;
      buffered = buffered.subarray(end);
    }
  };
}

/**
 * The first `n` null-terminated strings of a message's body (names, a statement's text), read without
 * decoding the rest: a Bind carries every parameter after them, attachments included.
 */
function leadingStrings(body: Buffer, n: number): string[] {
  const strings: string[] = [];
  let start = 0;
  while (strings.length < n) {
    const end = body.indexOf(0, start);
    if (end === -1) break;
    strings.push(body.toString('utf8', start, end));
    start = end + 1;
  }
  return strings;
}

/** Starts a proxy to the server of `url` (which must not ask for TLS: sslmode disable, as on localhost). */
export async function startPgCounter(url: string): Promise<PgCounter> {
  const target = new URL(url);
  const counts = { roundTrips: 0, statements: 0, byText: new Map<string, number>() };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    // Per connection: the text of each prepared statement (Parse), and the one each portal runs (Bind).
    const prepared = new Map<string, string>();
    let bound = '';
    const fromClient = messages((type, body) => {
      const fields = () => leadingStrings(body, 2);
      if (type === 0x50 /* P */) {
        const [name = '', text = ''] = fields();
        prepared.set(name, text);
      } else if (type === 0x42 /* B */) bound = prepared.get(fields()[1] ?? '') ?? '';
      else if (type === 0x51 /* Q */ || type === 0x45 /* E */) {
        // A simple query may carry several statements (write-behind.ts joins them with ";\n"), their
        // parameters written in as literals: each statement counts, its literals read as "?".
        for (const statement of type === 0x51 ? fields()[0]!.split(';\n') : [bound]) {
          counts.statements++;
          const text = statement.replace(/ ?E?'(?:[^']|'')*'/g, ' ?').replace(/\s+/g, ' ').trim().slice(0, 70);
          counts.byText.set(text, (counts.byText.get(text) ?? 0) + 1);
        }
      }
    }, 1);
    const fromServer = messages((type) => {
      if (type === 0x5a /* Z */) counts.roundTrips++;
    }, 0);
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as { port: number }).port);
  return {
    url: proxied.toString(),
    counts: () => ({ ...counts, byText: new Map(counts.byText) }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
