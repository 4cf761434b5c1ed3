// DKIM signing cost: the delivery rate into a local SMTP sink of DKIM-signed mail against unsigned
// mail, measured in the same run, twice: end to end through Mailroom (POST /emails, the worker, the
// relay transport), and on the worker's compose + sign + send path alone, where signing weighs most.
import nodemailer from 'nodemailer';
import { composeMessage } from '../src/delivery/mime-message.ts';
import { createDkimSigner, generateDkimKey } from '../src/delivery/dkim.ts';
import { sendVia } from '../src/delivery/smtp-send.ts';
import { newId } from '../src/time/ids.ts';
import type { EmailRow } from '../src/store/emails.ts';
import { postEmails, type Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { emailPayload } from './payload.ts';
import { DEFAULT_PROJECT_ID } from '../src/store/projects.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';

const SIGNED_FROM = 'Acme <orders@signed.example.com>';
const UNSIGNED_FROM = 'Acme <orders@example.com>';

/** Alternates unsigned and signed rounds so that drift in a shared machine's load hits both alike. */
async function alternate(rounds: number, measure: (signed: boolean) => Promise<number>): Promise<{ unsigned: number; signed: number }> {
  const total = { unsigned: 0, signed: 0 };
  for (let round = 0; round < rounds; round++) {
    total.unsigned += await measure(false);
    total.signed += await measure(true);
  }
  return { unsigned: total.unsigned / rounds, signed: total.signed / rounds };
}

async function endToEnd(sink: Sink, n: number, rounds: number): Promise<{ unsigned: number; signed: number }> {
  const mailroom = await startMailroom({ env: { SMTP_URL: sink.url } });
  try {
    const created = await fetch(`${mailroom.url}/domains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'signed.example.com' }),
    });
    if (created.status !== 201) throw new Error(`POST /domains answered ${created.status}`);
    const measure = async (signed: boolean, count = n) => {
      sink.reset();
      const started = performance.now();
      await postEmails(mailroom.url, count, 32, (i) => emailPayload(i, signed ? SIGNED_FROM : UNSIGNED_FROM));
      await waitForCount(sink, count);
      return count / ((performance.now() - started) / 1000);
    };
    await measure(false, 500); // warm-up
    await measure(true, 500);
    return await alternate(rounds, measure);
  } finally {
    await mailroom.stop();
  }
}

function emailRow(i: number, from: string): EmailRow {
  const p = emailPayload(i, from);
  const id = newId();
  return {
    id,
    project_id: DEFAULT_PROJECT_ID,
    from: p.from,
    to: p.to,
    cc: [],
    bcc: [],
    reply_to: [],
    subject: p.subject,
    headers: null,
    tags: p.tags,
    message_id: `<${id}@example.com>`,
    scheduled_at: null,
    template_id: null,
    topic_id: null,
    broadcast_id: null,
    personalization: null,
    last_event: 'queued',
    created_at: '',
    html: p.html,
    text: p.text,
  };
}

/** What the worker does per message, minus the database: compose, sign (or not), send over a pool. */
async function workerPath(sink: Sink, n: number, rounds: number): Promise<{ unsigned: number; signed: number }> {
  const secret = 'bench-secret-bench-secret-bench-secret';
  const key = await generateDkimKey(secret, 'bench-domain');
  const domain = { id: 'bench-domain', name: 'signed.example.com', dkim_selector: key.selector, dkim_private_key: key.sealedPrivateKey };
  const signer = createDkimSigner(secret);
  const transport = nodemailer.createTransport(`${sink.url}?pool=true&maxConnections=10&maxMessages=Infinity`);
  const measure = async (signed: boolean, count = n) => {
    sink.reset();
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < count) {
        const email = emailRow(next++, signed ? SIGNED_FROM : UNSIGNED_FROM);
        const composed = await composeMessage(email, [], new Date());
        const raw = signed ? await signer.sign(composed, domain) : composed;
        await sendVia(transport, { from: 'orders@signed.example.com', to: email.to }, raw);
      }
    };
    await Promise.all(Array.from({ length: 200 }, worker));
    await waitForCount(sink, count);
    return count / ((performance.now() - started) / 1000);
  };
  try {
    await measure(false, 500); // warm-up
    await measure(true, 500);
    return await alternate(rounds, measure);
  } finally {
    transport.close();
  }
}

export async function benchDkim(options: { n: number; rounds: number }): Promise<Figure[]> {
  const sink = await startSink();
  try {
    const direct = await workerPath(sink, options.n, options.rounds);
    const mailroom = await endToEnd(sink, options.n, options.rounds);
    return [
      { name: 'worker path, compose + send, unsigned (baseline)', value: direct.unsigned, unit: 'emails/s' },
      { name: 'worker path, compose + DKIM sign + send', value: direct.signed, unit: 'emails/s' },
      { name: 'worker path, signed / unsigned', value: direct.signed / direct.unsigned, unit: 'ratio' },
      { name: 'Mailroom end to end, unsigned (baseline)', value: mailroom.unsigned, unit: 'emails/s' },
      { name: 'Mailroom end to end, DKIM-signed', value: mailroom.signed, unit: 'emails/s' },
      { name: 'Mailroom end to end, signed / unsigned', value: mailroom.signed / mailroom.unsigned, unit: 'ratio' },
    ];
  } finally {
    sink.close();
  }
}
