// Mailroom's inbound SMTP server on a test app, and a real SMTP client (nodemailer) to send to it.
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { listenInbound } from '../../src/smtp/inbound-server.ts';
import type { SmtpListener } from '../../src/smtp/smtp-listener.ts';
import { smtpTlsPair } from '../../src/smtp/tls.ts';
import type { TestApp } from './harness.ts';

/** The environment of a test app that receives: the inbound server on a free port of 127.0.0.1. */
export const INBOUND_ENV = { INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1' };

/** Starts the inbound server of `t` (started with INBOUND_ENV), as `npm start` does. */
export async function startInbound(t: TestApp): Promise<SmtpListener & { port: number }> {
  const listener = await listenInbound(t.ctx, await smtpTlsPair(t.ctx));
  return Object.assign(listener, { port: listener.address().port });
}

/** An SMTP client for port `port` of 127.0.0.1: STARTTLS when offered, the self-signed certificate accepted. */
export function smtpClient(port: number, options: { requireTLS?: boolean } = {}) {
  return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false }, ...options });
}

/** Sends one message over a connection of its own; resolves with the server's answer to DATA. */
export async function sendTo(port: number, message: Mail.Options): Promise<{ response: string; accepted: unknown[]; rejected: unknown[] }> {
  const client = smtpClient(port);
  try {
    return await client.sendMail(message);
  } finally {
    client.close();
  }
}

/** A domain that receives, created through the API. */
export async function receivingDomain(t: TestApp, name: string): Promise<{ id: string }> {
  const { data, error } = await t.resend.domains.create({ name, capabilities: { receiving: 'enabled' } } as never);
  if (error) throw new Error(`creating ${name}: ${error.message}`);
  return data;
}
