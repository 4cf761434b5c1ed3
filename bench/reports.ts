// Hostile reports: the longest a client waits for GET /health while 1 MB bounce reports built to make a
// parser backtrack (a Final-Recipient of `a@a@a@...`) arrive at a bounce address, beside the same number
// of ordinary reports of the same size (the original message attached) in the same run. A stall of
// the event loop is what every client of the process waits for; a parser off the loop leaves it short.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import type { Figure } from './delivery.ts';
import { startMailroom } from './mailroom.ts';
import { freePort } from '../test/support/harness.ts';

const REPORTS = 8;
const AT_ONCE = 2;
const BOUNCES = 'bounces+0192e3a4444470008000000000000000aaaaaaaaaaaaaaaa@mx.bench.test';

function dsn(finalRecipient: string, original: string): string {
  return [
    'From: MAILER-DAEMON@remote.test',
    `To: ${BOUNCES}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
    '',
    '--b',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; remote.test',
    '',
    `Final-Recipient: ${finalRecipient}`,
    'Action: failed',
    'Status: 5.1.1',
    '',
    '--b',
    'Content-Type: message/rfc822',
    '',
    'Message-ID: <x@example.com>',
    '',
    original,
    '--b--',
    '',
  ].join('\r\n');
}

/** Resolves once `port` takes connections: the SMTP listener starts after the API answers /health. */
async function listening(port: number): Promise<void> {
  const open = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  while (!(await open())) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The longest GET /health took, in ms, while `n` reports (AT_ONCE at a time) were taken. */
async function longestWait(url: string, port: number, raw: string): Promise<number> {
  let longest = 0;
  let sending = true;
  const probe = (async () => {
    while (sending) {
      const started = performance.now();
      await fetch(`${url}/health`);
      longest = Math.max(longest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: AT_ONCE, ignoreTLS: true });
  await Promise.all(Array.from({ length: REPORTS }, () => transport.sendMail({ envelope: { from: '', to: BOUNCES }, raw })));
  transport.close();
  sending = false;
  await probe;
  return longest;
}

export async function benchReports(options: { bytes: number }): Promise<Figure[]> {
  const smtpPort = await freePort();
  const mailroom = await startMailroom({ role: 'api,smtp', env: { INBOUND_SMTP_PORT: String(smtpPort), MAILROOM_HOSTNAME: 'mx.bench.test', LOG_LEVEL: 'warn' } });
  try {
    await listening(smtpPort);
    const hostile = dsn(`rfc822; ${'a@'.repeat(options.bytes / 2)} x`, 'hi');
    const ordinary = dsn('rfc822; gone@example.com', 'x'.repeat(76).concat('\r\n').repeat(options.bytes / 78));
    await longestWait(mailroom.url, smtpPort, dsn('rfc822; gone@example.com', 'warm-up'));
    const plain = await longestWait(mailroom.url, smtpPort, ordinary);
    const attack = await longestWait(mailroom.url, smtpPort, hostile);
    const size = `${(options.bytes / 1024 / 1024).toFixed(2)} MB`;
    return [
      { name: `${REPORTS} ordinary reports of ${size}: longest /health, ms`, value: plain, unit: 'ms' },
      { name: `${REPORTS} hostile reports of ${size}: longest /health, ms`, value: attack, unit: 'ms' },
      { name: 'hostile / ordinary', value: attack / plain, unit: 'ratio' },
    ];
  } finally {
    await mailroom.stop();
  }
}
