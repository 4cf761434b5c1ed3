// Submission: messages accepted per second over SMTP (RFC 6409, an API key as password) by a pooled
// nodemailer client, against the same emails sent through POST /emails to the same Mailroom process,
// turn by turn in the same run. Both answer only once the email, its source and its job are committed.
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { cpuMs } from './cpu.ts';
import { postEmails, type Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { emailPayload } from './payload.ts';
import { idOf } from '../test/support/submission.ts';
import { freePort } from '../test/support/harness.ts';
import { median } from './stats.ts';

/** SMTP connections in the pool, and POST /emails requests in flight: the same for both paths. */
const CONNECTIONS = 16;
const TURNS = 5;

type Path = 'api' | 'smtp' | 'composed' | 'starttls';

/** The email of emailPayload(i) as a message: its tags in X-Mailroom-Tags, as POST /emails gets them. */
function message(i: number): Mail.Options {
  const { from, to, subject, html, text, tags } = emailPayload(i);
  return { from, to, subject, html, text, headers: { 'X-Mailroom-Tags': tags.map((t) => `${t.name}=${t.value}`).join(', ') } };
}

/**
 * n messages over CONNECTIONS pooled connections, signed in as `resend` with the bench key: plain
 * (AUTH before any TLS, as SUBMISSION_ALLOW_INSECURE_AUTH allows on loopback) or after STARTTLS.
 * nodemailer composes each message as it goes, unless `composed` holds them already.
 */
async function submitMessages(port: number, n: number, options: { starttls?: boolean; composed?: Buffer[] } = {}): Promise<void> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'resend', pass: BENCH_KEY },
    tls: { rejectUnauthorized: false },
    ...(options.starttls ? { requireTLS: true } : { ignoreTLS: true }),
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
  });
  const { composed } = options;
  try {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const mail = message(i);
        const info = await transport.sendMail(composed ? { envelope: { from: 'orders@example.com', to: mail.to }, raw: composed[i]! } : mail);
        // A 250 without an email id would be a message not stored: the figure would mean nothing.
        if (!idOf(info.response)) throw new Error(`unexpected reply to a submission: ${info.response}`);
      }),
    );
  } finally {
    transport.close();
  }
}

/** The rate of `work` over n messages, with the CPU per message of the Mailroom process and of this one (the client). */
async function measure(pid: number, n: number, work: () => Promise<void>): Promise<{ rate: number; serverCpu: number; clientCpu: number }> {
  const [serverBefore, clientBefore] = [cpuMs(pid), process.cpuUsage()];
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  return { rate: n / seconds, serverCpu: (cpuMs(pid) - serverBefore) / n, clientCpu: (client.user + client.system) / 1000 / n };
}

/**
 * One `--role api,smtp` process, as the receiving bench runs: no worker, so no turn shares the cores
 * with the capture of the turn before it; what is measured is acceptance, the same for both paths.
 */
export async function benchSubmission(options: { n: number }): Promise<Figure[]> {
  const { n } = options;
  const port = await freePort();
  const mailroom = await startMailroom({
    role: 'api,smtp',
    env: { SUBMISSION_PORT: String(port), SUBMISSION_ALLOW_INSECURE_AUTH: 'true', SUBMISSION_MAX_CONNECTIONS_PER_CLIENT: String(CONNECTIONS), LOG_LEVEL: 'warn' },
  });
  try {
    // nodemailer spends nearly as much CPU composing a message as Mailroom spends taking it, on the same
    // two cores: the `composed` path sends the same messages, built before the clock starts.
    const composed = await Promise.all(Array.from({ length: n }, (_, i) => new MailComposer(message(i)).compile().build()));
    const run: Record<Path, () => Promise<void>> = {
      api: async () => void (await postEmails(mailroom.url, n, CONNECTIONS)),
      smtp: () => submitMessages(port, n),
      composed: () => submitMessages(port, n, { composed }),
      starttls: () => submitMessages(port, n, { starttls: true }),
    };
    // Warm-up: a fresh process spends its first seconds compiling its code.
    await postEmails(mailroom.url, 500, CONNECTIONS);
    await submitMessages(port, 500);
    await submitMessages(port, 500, { starttls: true });
    const paths: Path[] = ['api', 'smtp', 'composed', 'starttls'];
    const turns: Record<Path, { rate: number; serverCpu: number; clientCpu: number }>[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      // Each turn runs the four in another order, so that none is always first after the same one.
      const order = paths.map((_, k) => paths[(k + turn) % paths.length]!);
      const results = {} as (typeof turns)[number];
      for (const path of order) results[path] = await measure(mailroom.pid, n, run[path]);
      turns.push(results);
    }
    const figures: Figure[] = turns.flatMap((t, i) => [
      { name: `turn ${i + 1}: POST /emails, emails/s`, value: t.api.rate, unit: '/s' },
      { name: `turn ${i + 1}: SMTP, messages/s`, value: t.smtp.rate, unit: '/s' },
      { name: `turn ${i + 1}: SMTP / API`, value: t.smtp.rate / t.api.rate, unit: 'ratio' },
      { name: `turn ${i + 1}: SMTP, composed beforehand / API`, value: t.composed.rate / t.api.rate, unit: 'ratio' },
      { name: `turn ${i + 1}: SMTP after STARTTLS / API`, value: t.starttls.rate / t.api.rate, unit: 'ratio' },
    ]);
    const of = (path: Path, field: 'rate' | 'serverCpu' | 'clientCpu') => median(turns.map((t) => t[path][field]));
    // Medians: one turn disturbed by the machine moves neither them nor the conclusion.
    figures.push(
      { name: `submission: emails/s through POST /emails (${CONNECTIONS} in flight)`, value: of('api', 'rate'), unit: '/s' },
      { name: `submission: messages/s over SMTP (pooled, ${CONNECTIONS} connections)`, value: of('smtp', 'rate'), unit: '/s' },
      { name: 'submission: messages/s over SMTP, composed beforehand', value: of('composed', 'rate'), unit: '/s' },
      { name: 'submission: messages/s over SMTP after STARTTLS', value: of('starttls', 'rate'), unit: '/s' },
      { name: 'submission: SMTP / API, median of turns', value: median(turns.map((t) => t.smtp.rate / t.api.rate)), unit: 'ratio' },
      { name: 'submission: SMTP composed beforehand / API, median', value: median(turns.map((t) => t.composed.rate / t.api.rate)), unit: 'ratio' },
      { name: 'submission: SMTP after STARTTLS / API, median of turns', value: median(turns.map((t) => t.starttls.rate / t.api.rate)), unit: 'ratio' },
      { name: 'Mailroom CPU per email, POST /emails', value: of('api', 'serverCpu'), unit: 'ms' },
      { name: 'Mailroom CPU per message, SMTP', value: of('smtp', 'serverCpu'), unit: 'ms' },
      { name: 'Mailroom CPU per message, SMTP after STARTTLS', value: of('starttls', 'serverCpu'), unit: 'ms' },
      { name: 'bench client CPU per email, POST /emails', value: of('api', 'clientCpu'), unit: 'ms' },
      { name: 'bench client CPU per message, SMTP (nodemailer)', value: of('smtp', 'clientCpu'), unit: 'ms' },
      { name: 'bench client CPU per message, SMTP, composed beforehand', value: of('composed', 'clientCpu'), unit: 'ms' },
    );
    return figures;
  } finally {
    await mailroom.stop();
  }
}
