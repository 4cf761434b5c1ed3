// A real HTTP server standing for an application's webhook endpoint: it records every request as it
// came (headers and raw body), and answers with the status `answer` gives it (200 by default), after
// `delayMs`.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed: {type, created_at, data}. */
  payload: { type: string; created_at: string; data: Record<string, any> };
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  answer: (hook: ReceivedWebhook) => number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver = { received: [] as ReceivedWebhook[], answer: (_: ReceivedWebhook) => 200, delayMs: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const hook = { headers: request.headers, body, payload: JSON.parse(body) };
      receiver.received.push(hook);
      const status = receiver.answer(hook);
      setTimeout(() => response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'refused'), receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
