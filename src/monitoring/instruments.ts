import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Availability } from '../store/availability.ts';
import type { Db } from '../store/db.ts';
import { dueJobs } from '../jobs/enqueue.ts';
import type { Clock } from '../time/clock.ts';

// What a process tells Prometheus (GET /metrics). The counters and histograms are this process's own
// (Prometheus adds the processes up); the queue gauges are read from the database at each scrape, so
// every process reports the same queue.

/** Buckets in seconds, from a fast API call to a delivery that waited for a slow server. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export interface Instruments {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  readonly emailEvents: Counter<'event'>;
  readonly deliveryLatency: Histogram<'outcome'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly smtpSessions: Counter<'server'>;
  readonly smtpLargeMessages: Gauge<'server' | 'state'>;
  readonly clientLimited: Counter<'limit' | 'action'>;
  /** Prometheus's text format: this context's instruments and the process's own (CPU, memory, event loop). */
  scrape(): Promise<{ contentType: string; body: string }>;
}

let processRegistry: Registry | undefined;

/** The process's default metrics, registered once however many contexts a process makes (tests). */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'mailroom_' });
  }
  return processRegistry;
}

export function createInstruments(db: Db, clock: Clock, availability: Availability): Instruments {
  const registry = new Registry();
  const registers = [registry];
  const instruments = {
    registry,
    httpRequests: new Counter({ name: 'mailroom_http_requests_total', help: 'HTTP requests answered, by route as declared and status.', labelNames: ['method', 'route', 'status'], registers }),
    httpDuration: new Histogram({ name: 'mailroom_http_request_duration_seconds', help: 'Time to answer an HTTP request.', labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers }),
    emailEvents: new Counter({ name: 'mailroom_email_events_total', help: 'Email events recorded (per recipient), by event.', labelNames: ['event'], registers }),
    deliveryLatency: new Histogram({
      name: 'mailroom_delivery_latency_seconds',
      help: "From an email's acceptance to the receiving server's answer for a recipient, by outcome.",
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    webhookAttempts: new Counter({ name: 'mailroom_webhook_attempts_total', help: 'Webhook delivery attempts, by outcome.', labelNames: ['outcome'], registers }),
    clientLimited: new Counter({
      name: 'mailroom_http_client_limited_total',
      help: 'HTTP requests past a per-client-address limit, by limit (auth_failures, public_rate) and action (refused; unrecorded: a tracking fetch answered, not recorded).',
      labelNames: ['limit', 'action'],
      registers,
    }),
    smtpSessions: new Counter({ name: 'mailroom_smtp_sessions_total', help: 'SMTP connections accepted, by server (inbound, submission).', labelNames: ['server'], registers }),
    smtpLargeMessages: new Gauge({
      name: 'mailroom_smtp_large_messages',
      help: 'SMTP messages over 1 MB holding one of the two turns to be read and stored (state=held), or waiting for one (state=waiting), by server.',
      labelNames: ['server', 'state'],
      registers,
    }),
    async scrape() {
      const [own, process] = await Promise.all([registry.metrics(), processMetrics().metrics()]);
      return { contentType: registry.contentType, body: `${own}\n${process}` };
    },
  };
  // Every series of the large-message gauge from the start, at 0: a dashboard sees the turns before any is taken.
  for (const server of ['inbound', 'submission']) for (const state of ['held', 'waiting']) instruments.smtpLargeMessages.set({ server, state }, 0);
  // Read from the database at each scrape, by one query for both: prom-client collects every metric of
  // a registry at once, so each gauge waits for the same reading rather than the first setting both.
  let reading: Promise<void> | undefined;
  const read = () =>
    (reading ??= (async () => {
      try {
        const now = clock.now();
        // While the database is away the scrape still answers, without the queue: mailroom_database_up says why.
        const rows = await dueJobs(db, now).catch((error: unknown) => {
          if (availability.failed(error)) return [];
          throw error;
        });
        due.reset();
        age.reset();
        for (const row of rows) {
          due.set({ task: row.task }, row.due);
          age.set({ task: row.task }, Math.max(0, (now - row.oldest_run_at) / 1000));
        }
      } finally {
        reading = undefined;
      }
    })());
  const due: Gauge<'task'> = new Gauge({
    name: 'mailroom_jobs_due',
    help: 'Jobs due now and not taken by a worker, by task (the same in every process).',
    labelNames: ['task'],
    registers,
    collect: read,
  });
  const age: Gauge<'task'> = new Gauge({ name: 'mailroom_jobs_oldest_due_age_seconds', help: 'How long the oldest due job has waited, by task.', labelNames: ['task'], registers, collect: read });
  const up: Gauge = new Gauge({
    name: 'mailroom_database_up',
    help: "1 while this process's database works; 0 while it is unavailable, read-only or full (store/availability.ts).",
    registers,
    collect(): void {
      up.set(availability.outage() ? 0 : 1);
    },
  });
  return instruments;
}
