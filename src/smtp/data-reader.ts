import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { clientKey } from '../limits/client-key.ts';
import { smtpError } from './connection-limit.ts';

// Reading DATA, for both SMTP servers. A message over 1 MB is read and stored in one of a server's two
// turns (it costs a few times its size in memory until committed). A client that holds a turn and
// sends slowly would keep every other large message waiting: so a client holds one turn at most, DATA
// has a minimum rate and a deadline, and a sender waiting for a turn is never timed out for it.

/** Messages over this size need a turn. */
const LARGE_BYTES = 1024 * 1024;
const MAX_LARGE_MESSAGES = 2;
/** How often a message being read is checked against the rate and the deadline. */
const TICK_MS = 1000;

export interface DataLimits {
  /** The whole of DATA must arrive within this long, time spent waiting for a turn aside. */
  timeoutMs: number;
  /** Bytes a second a client must send, measured over each window of DATA; 0: none. */
  minBytesPerSecond: number;
  /** The window the rate is measured over: 30 s unless a test says otherwise. */
  windowMs?: number;
}

/** A large message's state, for the gauge: reading or stored in a turn, or waiting for one. */
export type TurnState = 'held' | 'waiting';

/**
 * The turns for large messages: at most `max` held at once, one per client (clientKey); the others
 * wait, first come first served among those whose client holds none.
 */
function largeTurns(max: number) {
  const holders = new Set<string>();
  const queue: { client: string; grant: () => void }[] = [];
  const next = () => {
    for (let i = 0; i < queue.length && holders.size < max; ) {
      const waiter = queue[i]!;
      if (holders.has(waiter.client)) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      holders.add(waiter.client);
      waiter.grant();
    }
  };
  return {
    acquire: (client: string) =>
      new Promise<void>((grant) => {
        queue.push({ client, grant });
        next();
      }),
    release(client: string): void {
      holders.delete(client);
      next();
    },
  };
}

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;

/** The connection of a session: smtp-server gives onData no way to its socket or its replies. */
function connectionOf(server: SMTPServer, session: SMTPServerSession): Connection | undefined {
  for (const connection of server.connections) if (connection.id === session.id) return connection;
  return undefined;
}

/**
 * Reads DATA whole (undefined when it went over the size limit, read to the end all the same) and
 * hands it to `handle`. Past 1 MB, reading waits for a turn (the client held back by TCP, its idle
 * timeout paused meanwhile), held until `handle` is done. A client under the minimum rate or past the
 * deadline is answered 421 and disconnected, and its turn handed on. `count` hears of turns held and waited for.
 */
export function messageReader(limits: DataLimits, count: (state: TurnState, by: number) => void) {
  const turns = largeTurns(MAX_LARGE_MESSAGES);
  return async <T>(server: SMTPServer, stream: SMTPServerDataStream, session: SMTPServerSession, handle: (data: Buffer | undefined) => Promise<T>): Promise<T> => {
    const client = clientKey(session.remoteAddress);
    const connection = connectionOf(server, session);
    let [holding, done] = [false, false];
    // A turn granted after the message ended (the client left while it waited) is handed on at once.
    const whenLarge = async () => {
      count('waiting', 1);
      connection?._socket.setTimeout(0);
      try {
        await turns.acquire(client);
      } finally {
        count('waiting', -1);
        connection?._socket.setTimeout(server.options.socketTimeout ?? 60_000);
      }
      if (done) return turns.release(client);
      holding = true;
      count('held', 1);
    };
    const cutOff = (message: string) => connection?.send(421, message);
    try {
      return await handle(await readData(stream, limits, whenLarge, cutOff));
    } finally {
      done = true;
      if (holding) {
        turns.release(client);
        count('held', -1);
      }
    }
  };
}

/** The message's bytes, read under the rate and the deadline, waiting for a turn once past 1 MB. */
function readData(
  stream: SMTPServerDataStream,
  { timeoutMs, minBytesPerSecond, windowMs = 30_000 }: DataLimits,
  whenLarge: () => Promise<void>,
  cutOff: (message: string) => void,
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let [bytes, waiting] = [0, false];
    // Time is counted in ticks while reading, not while waiting for a turn: the wait is not the client's doing.
    let [readFor, windowFor, windowBytes] = [0, 0, 0];
    const stop = (message: string) => {
      clearInterval(ticks);
      cutOff(message);
      reject(smtpError(421, message));
    };
    const tick = Math.min(TICK_MS, windowMs);
    const ticks = setInterval(() => {
      if (waiting) return;
      [readFor, windowFor] = [readFor + tick, windowFor + tick];
      if (readFor >= timeoutMs) return stop(`4.4.2 Took too long: a message must arrive within ${Math.round(timeoutMs / 1000)} seconds`);
      if (windowFor < windowMs) return;
      if (windowBytes < (minBytesPerSecond * windowMs) / 1000) return stop(`4.4.2 Too slow: under ${minBytesPerSecond} bytes a second`);
      [windowFor, windowBytes] = [0, 0];
    }, tick);
    stream.on('data', (chunk: Buffer) => {
      windowBytes += chunk.length;
      if (stream.sizeExceeded) return;
      chunks.push(chunk);
      if (bytes < LARGE_BYTES && (bytes += chunk.length) >= LARGE_BYTES) {
        stream.pause();
        waiting = true;
        whenLarge().then(() => {
          [waiting, windowFor, windowBytes] = [false, 0, 0];
          stream.resume();
        }, reject);
      }
    });
    stream.on('error', (error) => {
      clearInterval(ticks);
      reject(error);
    });
    stream.on('end', () => {
      clearInterval(ticks);
      resolve(stream.sizeExceeded ? undefined : Buffer.concat(chunks));
    });
  });
}
