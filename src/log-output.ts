import { writeSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

// The process's log lines on stdout: JSON, for a supervisor or a collector; at a terminal, lines for a
// person (pino-pretty), held back while the process starts so that the banner (banner.ts) comes first.

export interface ProcessLog {
  log: Logger;
  /** Writes the lines held back, and every later one at once. */
  release(): void;
}

export function processLog(level: string, terminal = process.stdout.isTTY === true): ProcessLog {
  if (!terminal) return { log: pino({ level }), release: () => undefined };
  const pretty = prettyFactory({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  let held: string[] | undefined = [];
  // A start that stops (a port in use, a crash) still shows what it logged.
  const flush = () => {
    if (held?.length) writeSync(1, held.join(''));
    held = undefined;
  };
  process.once('exit', flush);
  const write = (line: string) => {
    const text = pretty(line);
    if (held) held.push(text);
    else process.stdout.write(text);
  };
  return { log: pino({ level }, { write }), release: flush };
}
