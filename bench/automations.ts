// Automations end to end: n `POST /events/send` to an enabled automation whose first step after its
// trigger sends a published template (its variables read from the event's payload), each event for an
// address that is no contact yet (a sign-up: the run creates the contact), timed from the first request
// to the last message the SMTP sink receives; beside the baseline, n `POST /emails` of the same template
// to the same addresses, timed alike. Each side gets a fresh Mailroom as `npm start` runs it (API and
// worker in one process), on SQLite, and on PostgreSQL too when BENCH_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { cpuMs } from './cpu.ts';
import { postEach, WARM_UP, type Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom, type Mailroom } from './mailroom.ts';
import { startSink, waitForCount, type Sink } from './sink.ts';
import { postgresSchema } from '../test/support/postgres-schema.ts';

const CONNECTIONS = 32;
const EVENT = 'user.created';

const paragraph = 'Thanks for signing up. Here is how to get the most of your account in your first week. ';
const html = `<html><body><h1>Welcome, {{{NAME}}}!</h1><p>You chose the {{{PLAN}}} plan.</p>${Array.from({ length: 30 }, (_, i) => `<p>${i}. ${paragraph}</p>`).join('')}</body></html>`;

const address = (i: number) => `user${i}@example.com`;
const variables = (i: number) => ({ NAME: `User ${i}`, PLAN: i % 2 === 0 ? 'pro' : 'free' });

/** The two ways to send the i-th welcome email: a request path and its body. */
const sides = {
  emails: { path: '/emails', body: (i: number) => ({ to: address(i), template: { id: 'welcome', variables: variables(i) } }) },
  automations: {
    path: '/events/send',
    body: (i: number) => {
      const { NAME, PLAN } = variables(i);
      return { event: EVENT, email: address(i), payload: { name: NAME, plan: PLAN } };
    },
  },
};
type Side = keyof typeof sides;

async function call(mailroom: Mailroom, path: string, body?: object): Promise<{ id: string }> {
  const response = await fetch(`${mailroom.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { id: string };
}

/** The published template `welcome`, and the enabled automation: trigger, then send_email with it. */
async function setUp(mailroom: Mailroom): Promise<void> {
  const template = await call(mailroom, '/templates', {
    name: 'welcome',
    alias: 'welcome',
    from: 'Acme <hello@example.com>',
    subject: 'Welcome, {{{NAME}}}',
    html,
    variables: [
      { key: 'NAME', type: 'string' },
      { key: 'PLAN', type: 'string', fallback_value: 'free' },
    ],
  });
  await call(mailroom, `/templates/${template.id}/publish`);
  await call(mailroom, '/automations', {
    name: 'Welcome',
    status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: EVENT } },
      { key: 'welcome', type: 'send_email', config: { template: { id: template.id, variables: { NAME: { var: 'event.name' }, PLAN: { var: 'event.plan' } } } } },
    ],
    connections: [{ from: 'start', to: 'welcome' }],
  });
}

interface Rates {
  /** Requests accepted per second, first request to last answer. */
  accepted: number;
  /** Emails per second, first request to the last message in the sink. */
  delivered: number;
  /** CPU of the Mailroom process (every thread) per email, in ms. */
  cpu: number;
}

/** n sends of `side` (the i-th for address offset + i) into the sink, timed. */
async function timed(mailroom: Mailroom, sink: Sink, side: Side, n: number, offset: number): Promise<Rates> {
  const { path, body } = sides[side];
  sink.reset();
  const cpuBefore = cpuMs(mailroom.pid);
  const started = performance.now();
  const accepted = await postEach(mailroom.url, path, n, CONNECTIONS, (i) => body(offset + i));
  await waitForCount(sink, n);
  const seconds = (performance.now() - started) / 1000;
  return { accepted, delivered: n / seconds, cpu: (cpuMs(mailroom.pid) - cpuBefore) / n };
}

/** One side on a fresh Mailroom (on `databaseUrl`, a fresh PostgreSQL schema, or a fresh SQLite file): warmed up, then n measured. */
async function run(side: Side, n: number, sink: Sink, base: string | undefined): Promise<Rates> {
  const postgres = base ? await postgresSchema(base, 'bench') : undefined;
  const env: Record<string, string> = { SMTP_URL: sink.url, ...(postgres ? { MAILROOM_SECRET: randomBytes(32).toString('hex') } : {}) };
  try {
    const mailroom = await startMailroom({ env, databaseUrl: postgres?.url });
    try {
      await setUp(mailroom);
      // A fresh process spends its first seconds compiling its code.
      await timed(mailroom, sink, side, WARM_UP, 0);
      return await timed(mailroom, sink, side, n, WARM_UP);
    } finally {
      await mailroom.stop();
    }
  } finally {
    await postgres?.drop();
  }
}

async function compare(label: string, n: number, sink: Sink, base: string | undefined): Promise<Figure[]> {
  const emails = await run('emails', n, sink, base);
  const automations = await run('automations', n, sink, base);
  return [
    { name: `${label}: POST /emails, template, end to end (baseline)`, value: emails.delivered, unit: 'emails/s' },
    { name: `${label}: POST /events/send, automation, end to end`, value: automations.delivered, unit: 'emails/s' },
    { name: `${label}: automations / POST /emails, end to end`, value: automations.delivered / emails.delivered, unit: 'ratio' },
    { name: `${label}: POST /emails accepted`, value: emails.accepted, unit: 'req/s' },
    { name: `${label}: POST /events/send accepted`, value: automations.accepted, unit: 'req/s' },
    { name: `${label}: events / emails, accepted`, value: automations.accepted / emails.accepted, unit: 'ratio' },
    { name: `${label}: CPU per email, POST /emails`, value: emails.cpu, unit: 'ms' },
    { name: `${label}: CPU per email, POST /events/send`, value: automations.cpu, unit: 'ms' },
  ];
}

export async function benchAutomations(options: { n: number }): Promise<Figure[]> {
  const sink = await startSink();
  try {
    const figures = await compare('SQLite', options.n, sink, undefined);
    const base = process.env.BENCH_DATABASE_URL;
    if (base) figures.push(...(await compare('PostgreSQL', options.n, sink, base)));
    return figures;
  } finally {
    sink.close();
  }
}
