// The ceilings: a bare Fastify route that parses the same JSON body and answers {id}, nothing else, in
// its own process like Mailroom (the API benchmark's). Given an SMTP URL, it also hands each email to a
// pooled nodemailer transport and stores nothing (end-to-end delivery's): what Mailroom does beyond it
// (validation, durable storage, the queue, events) is what end to end costs.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import nodemailer from 'nodemailer';

interface Email {
  from: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
}

/** Starts the bare route in a child process; with `smtpUrl` it relays each email there. */
export async function startBare(smtpUrl?: string): Promise<{ address: string; pid: number; stop(): void }> {
  const child = fork(new URL(import.meta.url), smtpUrl ? [smtpUrl] : [], { execArgv: ['--import', 'tsx'] });
  const address = await new Promise<string>((resolve) => child.once('message', (m: { address: string }) => resolve(m.address)));
  return { address, pid: child.pid!, stop: () => child.kill() };
}

async function serve(smtpUrl: string | undefined): Promise<void> {
  const transport = smtpUrl && nodemailer.createTransport(`${smtpUrl}?pool=true&maxConnections=10&maxMessages=Infinity`);
  const app = Fastify({ bodyLimit: 41 * 1024 * 1024 });
  app.post('/emails', async (request) => {
    if (transport) {
      const { from, to, subject, html, text } = request.body as Email;
      transport.sendMail({ from, to, subject, html, text }).catch((error: Error) => console.error(error.message));
    }
    return { id: randomUUID() };
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  process.send!({ address });
  process.on('disconnect', () => process.exit(0));
}

// Run as the child of startBare().
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await serve(process.argv[2]);
