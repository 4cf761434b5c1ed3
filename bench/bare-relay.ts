// The ceiling for end-to-end delivery: a bare Fastify route that takes the same JSON body, answers
// {id} and hands the email to a pooled nodemailer transport, storing nothing, in its own process
// like Mailroom. Whatever Mailroom does more (validation, durable storage, the queue, events) is
// what end to end costs beyond this.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import nodemailer from 'nodemailer';

const sinkUrl = process.argv[2]!;
const transport = nodemailer.createTransport(`${sinkUrl}?pool=true&maxConnections=10&maxMessages=Infinity`);
const app = Fastify({ bodyLimit: 41 * 1024 * 1024 });
app.post('/emails', async (request) => {
  const { from, to, subject, html, text } = request.body as { from: string; to: string[]; subject: string; html: string; text: string };
  transport.sendMail({ from, to, subject, html, text }).catch((error: Error) => console.error(error.message));
  return { id: randomUUID() };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.send!({ address });
process.on('disconnect', () => process.exit(0));
