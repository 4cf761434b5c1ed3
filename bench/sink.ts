import { fork, type ChildProcess } from 'node:child_process';

export interface Sink {
  url: string;
  count(): Promise<number>;
  reset(): void;
  close(): void;
}

/** Starts the SMTP sink in a child process; with `delayMs` it answers each message after least to most ms. */
export async function startSink(delayMs?: { least: number; most: number }): Promise<Sink> {
  const args = delayMs ? ['--delay', `${delayMs.least}-${delayMs.most}`] : [];
  const child: ChildProcess = fork(new URL('./sink-server.ts', import.meta.url), args, { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    url: `smtp://127.0.0.1:${port}`,
    count: () =>
      new Promise((resolve) => {
        child.once('message', (m: { count: number }) => resolve(m.count));
        child.send('count');
      }),
    reset: () => child.send('reset'),
    close: () => child.kill(),
  };
}

/** Resolves once the sink has received `n` messages. */
export async function waitForCount(sink: Sink, n: number): Promise<void> {
  while ((await sink.count()) < n) await new Promise((resolve) => setTimeout(resolve, 10));
}
