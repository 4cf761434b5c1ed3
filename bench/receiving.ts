// Receiving: messages taken per second over SMTP by Mailroom's inbound server (parsed, authenticated,
// committed with their event before each 250) against a bare smtp-server that discards them, the same
// nodemailer client sending the same messages to each, turn by turn in the same run.
import { fork } from 'node:child_process';
import nodemailer from 'nodemailer';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { html, text } from './payload.ts';
import { startDnsServer } from '../test/support/dns-server.ts';
import { freePort } from '../test/support/harness.ts';

/** Senders at once, as an MX sees them; all from one address here, so Mailroom's per-client limit is raised to match. */
const CONNECTIONS = 16;
const TURNS = 5;

/** n messages over CONNECTIONS pooled connections (plain SMTP, as between MX hosts without TLS); resolves with the rate. */
async function sendMessages(port: number, n: number): Promise<number> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: CONNECTIONS, maxMessages: Infinity, ignoreTLS: true });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      transport.sendMail({ from: 'sender@example.com', to: `inbox${i % 10}@inbox.test`, subject: `Message ${i}`, text, html }),
    ),
  );
  const rate = n / ((performance.now() - started) / 1000);
  transport.close();
  return rate;
}

async function startBare(): Promise<{ port: number; stop(): void }> {
  const child = fork(new URL('./bare-smtp-server.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return { port, stop: () => child.kill() };
}

export async function benchReceiving(options: { n: number }): Promise<Figure[]> {
  const smtpPort = await freePort();
  // The sender's SPF and DMARC records come from a local DNS server, as from a warm resolver cache.
  const dns = await startDnsServer();
  dns.add('example.com', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.add('_dmarc.example.com', { TXT: ['v=DMARC1; p=none'] });
  const mailroom = await startMailroom({ role: 'api,smtp', env: { INBOUND_SMTP_PORT: String(smtpPort), INBOUND_MAX_CONNECTIONS_PER_CLIENT: String(CONNECTIONS), DNS_SERVERS: dns.address, LOG_LEVEL: 'warn' } });
  const bare = await startBare();
  try {
    const response = await fetch(`${mailroom.url}/domains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'inbox.test', capabilities: { receiving: 'enabled' } }),
    });
    if (response.status !== 201 && response.status !== 200) throw new Error(`POST /domains answered ${response.status}: ${await response.text()}`);
    await sendMessages(smtpPort, 200);
    await sendMessages(bare.port, 200);
    const figures: Figure[] = [];
    const ratios: number[] = [];
    for (let turn = 1; turn <= TURNS; turn++) {
      const ceiling = await sendMessages(bare.port, options.n);
      const received = await sendMessages(smtpPort, options.n);
      figures.push(
        { name: `turn ${turn}: bare smtp-server, messages/s`, value: ceiling, unit: '/s' },
        { name: `turn ${turn}: Mailroom inbound, messages/s`, value: received, unit: '/s' },
        { name: `turn ${turn}: Mailroom / bare smtp-server`, value: received / ceiling, unit: 'ratio' },
      );
      ratios.push(received / ceiling);
    }
    // The median: one turn disturbed by the machine moves neither it nor the conclusion.
    figures.push({ name: 'median Mailroom / bare smtp-server', value: ratios.sort((a, b) => a - b)[Math.floor(TURNS / 2)]!, unit: 'ratio' });
    return figures;
  } finally {
    bare.stop();
    await mailroom.stop();
    await dns.close();
  }
}
