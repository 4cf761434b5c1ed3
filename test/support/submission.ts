// Mailroom's SMTP submission server on a test app, and a real SMTP client (nodemailer) that signs in to it.
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { submissionServer } from '../../src/smtp/submission-server.ts';
import type { SmtpListener } from '../../src/smtp/smtp-listener.ts';
import { smtpTlsPair } from '../../src/smtp/tls.ts';
import type { TestApp } from './harness.ts';

/** Starts a submission listener of `t` on a free port of 127.0.0.1: STARTTLS, or implicit TLS when `secure`. */
export async function startSubmission(t: TestApp, secure = false): Promise<SmtpListener & { port: number }> {
  const listener = await submissionServer(t.ctx, await smtpTlsPair(t.ctx)).listen(0, secure);
  return Object.assign(listener, { port: listener.address().port });
}

/** The id in a submission's 250 reply. */
export const idOf = (response: string) => /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response)?.[1];

/** A nodemailer client signed in as `resend` with `password`; the self-signed certificate accepted. */
export function submissionClient(port: number, password: string | undefined, options: SMTPTransport.Options = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    tls: { rejectUnauthorized: false },
    ...(password === undefined ? {} : { auth: { user: 'resend', pass: password } }),
    ...options,
  });
}
