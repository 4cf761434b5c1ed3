// Faults of the database under load, as an operator meets them: Mailroom's API (with SMTP submission)
// and a worker in processes of their own, on a PostgreSQL cluster of the rig's own, while clients send
// a steady stream of email (the API and SMTP submission) that the worker delivers into a real SMTP
// sink. Each fault is injected in turn, and what came of it measured: the answers during it, the
// deliveries it delayed, duplicates, the processes' log lines and whether they still run.
import { spawn, type ChildProcess } from 'node:child_process';
import nodemailer from 'nodemailer';
import { toTimestamp } from '../../src/time/clock.ts';
import { eventually, freePort, TEST_ENV } from './harness.ts';
import { startPostgresCluster } from './postgres-cluster.ts';
import { startSmtpServer } from './smtp-server.ts';

export type FaultName = 'restart' | 'terminate' | 'outage' | 'crash' | 'read-only' | 'hang';

/** What each fault does, and how long the database stays away (the outage's 30 s is the issue's). */
export const FAULTS: Record<FaultName, string> = {
  restart: 'pg_ctl restart -m fast',
  terminate: 'pg_terminate_backend of every connection',
  outage: 'pg_ctl stop -m fast, 30 s, start',
  crash: 'pg_ctl stop -m immediate (a crash), start',
  'read-only': 'default_transaction_read_only on for 6 s (a failover under way)',
  hang: 'SIGSTOP to every server process for 8 s',
};

const KEY = `re_${'f'.repeat(40)}`;
/** Jobs a worker runs at once: the most one fault may deliver twice (sends under way when it struck). */
export const CONCURRENCY = 16;
const HTTP_CLIENTS = 3;
const HTTP_PAUSE_MS = 40;
const SMTP_PAUSE_MS = 150;
/** Emails sent in batches just before each fault, so that it finds mail waiting to be delivered. */
const BACKLOG = 200;

/** One answer a client got: HTTP status (0: no answer) or SMTP reply code, and whether it is one the rules allow. */
export interface Answer {
  at: number;
  via: 'http' | 'smtp';
  code: number;
  allowed: boolean;
  text: string;
}

export interface FaultReport {
  fault: FaultName;
  /** The database's return to the first and the last delivery of an email accepted before the fault and delivered after the return (ms). */
  firstMs: number | undefined;
  lastMs: number | undefined;
  /** Answers from the fault to its return (and the API's and submission's codes among them). */
  answers: Map<string, number>;
  /** Answers the rules forbid (a 500, a reset, a 503 without the error shape or Retry-After). */
  forbidden: Answer[];
  /** Deliveries beyond one per email, during this fault. */
  duplicates: number;
  /** Lines each process logged saying the database went away, and came back. */
  lines: { api: { down: number; back: number }; worker: { down: number; back: number } };
  running: boolean;
}

interface Process {
  child: ChildProcess;
  output: string[];
  stderr: string;
}

function launch(role: string, env: Record<string, string>): Process {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', role], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Process = { child, output: [], stderr: '' };
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    // Only the lines about the database are kept: a request's line each is many.
    for (const line of lines) if (line.includes('"the database is ')) proc.output.push(line);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (proc.stderr += chunk));
  return proc;
}

const running = (p: Process) => p.child.exitCode === null && p.child.signalCode === null;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function countLines(p: Process, from: number): { down: number; back: number } {
  const lines = p.output.slice(from);
  const back = lines.filter((line) => line.includes('"the database is back')).length;
  return { down: lines.length - back, back };
}

/** An HTTP answer as the rules want it: 200 with an id, or 503 in the error shape with Retry-After. */
async function httpAnswer(response: Response): Promise<{ ok: boolean; allowed: boolean; text: string }> {
  const text = await response.text();
  let body: { id?: string; statusCode?: number; name?: string; message?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: not allowed below.
  }
  if (response.status === 200) return { ok: typeof body.id === 'string', allowed: typeof body.id === 'string', text };
  const shaped = response.status === 503 && body.statusCode === 503 && body.name === 'service_unavailable' && typeof body.message === 'string';
  return { ok: false, allowed: shaped && response.headers.get('retry-after') !== null, text };
}

export interface FaultRig {
  /** Injects `fault` under the steady stream, waits until every accepted email is delivered, and reports. */
  inject(fault: FaultName): Promise<FaultReport>;
  /** Emails accepted so far. */
  accepted(): number;
  /** The processes' stderr, for a failure's message. */
  stderr(): string;
  close(): Promise<void>;
}

export async function startFaultRig(options: { log?: (line: string) => void } = {}): Promise<FaultRig> {
  const log = options.log ?? (() => {});
  const cluster = await startPostgresCluster();
  const sink = await startSmtpServer();
  // Each message waits in the sink before its 250, so that a fault finds sends under way.
  sink.delayMs = 100;
  const delivered = new Map<string, number[]>();
  sink.onMessage = (message) => {
    const subject = message.parsed.subject ?? '';
    const times = delivered.get(subject) ?? [];
    times.push(Date.now());
    delivered.set(subject, times);
    return undefined;
  };
  const [port, submissionPort, healthPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...TEST_ENV,
    LOG_LEVEL: 'info',
    WORKER_POLL_MS: '1000',
    DATABASE_URL: cluster.url,
    MAILROOM_API_KEY: KEY,
    MAILROOM_HOSTNAME: 'mail.example.com',
    SMTP_URL: sink.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    SUBMISSION_PORT: String(submissionPort),
    WORKER_HEALTH_PORT: String(healthPort),
    WORKER_CONCURRENCY: String(CONCURRENCY),
  };
  const url = `http://127.0.0.1:${port}`;
  // The API migrates the database; the worker starts on it afterwards.
  const api = launch('api,smtp', env);
  await eventually(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 60_000);
  const { SUBMISSION_PORT: _, ...workerEnv } = env;
  const worker = launch('worker', workerEnv);
  await eventually(async () => (await fetch(`http://127.0.0.1:${healthPort}/health`).catch(() => undefined))?.ok, 60_000);

  const answers: Answer[] = [];
  const acknowledged = new Map<string, number>();
  let sequence = 0;
  let sending = true;

  const httpClient = async () => {
    while (sending) {
      const subject = `h${sequence++}`;
      const at = Date.now();
      try {
        const response = await fetch(`${url}/emails`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ from: 'sender@example.com', to: 'rcpt@example.net', subject, text: 'steady stream' }),
        });
        const { ok, allowed, text } = await httpAnswer(response);
        answers.push({ at, via: 'http', code: response.status, allowed, text: text.slice(0, 300) });
        if (ok) acknowledged.set(subject, Date.now());
      } catch (error) {
        answers.push({ at, via: 'http', code: 0, allowed: false, text: String((error as Error).cause ?? error) });
      }
      await sleep(HTTP_PAUSE_MS);
    }
  };
  const smtpClient = async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: submissionPort, secure: false, tls: { rejectUnauthorized: false }, auth: { user: 'resend', pass: KEY } });
    while (sending) {
      const subject = `s${sequence++}`;
      const at = Date.now();
      try {
        await transport.sendMail({ from: 'sender@example.com', to: 'rcpt@example.net', subject, text: 'steady stream' });
        answers.push({ at, via: 'smtp', code: 250, allowed: true, text: '' });
        acknowledged.set(subject, Date.now());
      } catch (error) {
        const { responseCode, response } = error as { responseCode?: number; response?: string };
        const allowed = responseCode === 451 && /^451 4\.3\.0 /.test(response ?? '');
        answers.push({ at, via: 'smtp', code: responseCode ?? 0, allowed, text: String(response ?? error) });
      }
      await sleep(SMTP_PAUSE_MS);
    }
    transport.close();
  };
  const clients = [...Array.from({ length: HTTP_CLIENTS }, httpClient), smtpClient()];

  /** Sends BACKLOG emails in batches of 100 (POST /emails/batch), to be waiting when the fault strikes. */
  const sendBacklog = async () => {
    for (let i = 0; i < BACKLOG; i += 100) {
      const subjects = Array.from({ length: 100 }, () => `b${sequence++}`);
      const response = await fetch(`${url}/emails/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(subjects.map((subject) => ({ from: 'sender@example.com', to: 'rcpt@example.net', subject, text: 'backlog' }))),
      });
      if (response.status !== 200) throw new Error(`the backlog's batch answered ${response.status}: ${await response.text()}`);
      for (const subject of subjects) acknowledged.set(subject, Date.now());
    }
  };

  /** Whether every email accepted before `before` has been delivered (later ones may be on their way); throws once a process exited. */
  const deliveredUpTo = (before: number) => {
    for (const [name, p] of [['API', api], ['worker', worker]] as const) {
      if (!running(p)) throw new Error(`the ${name} process exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.stderr.slice(-3000)}`);
    }
    return [...acknowledged.entries()].every(([subject, at]) => at >= before || delivered.has(subject));
  };
  const extraDeliveries = () => [...delivered.values()].reduce((sum, times) => sum + times.length - 1, 0);

  async function breakDatabase(fault: FaultName): Promise<void> {
    switch (fault) {
      case 'restart':
        return cluster.restart();
      case 'terminate':
        return void (await cluster.terminateBackends());
      case 'outage':
        await cluster.stop('fast');
        await sleep(30_000);
        return cluster.start();
      case 'crash':
        await cluster.stop('immediate');
        return cluster.start();
      case 'read-only':
        await cluster.query('alter system set default_transaction_read_only = on');
        await cluster.query('select pg_reload_conf()');
        await sleep(6000);
        await cluster.query('alter system reset default_transaction_read_only');
        await cluster.query('select pg_reload_conf()');
        return;
      case 'hang':
        await cluster.signal('SIGSTOP');
        await sleep(8000);
        return cluster.signal('SIGCONT');
    }
  }

  return {
    async inject(fault) {
      // A steady state first: the stream flowing, everything accepted until a second ago delivered.
      await eventually(() => acknowledged.size > 0 && deliveredUpTo(Date.now() - 1000), 60_000);
      const marks = { answers: answers.length, api: api.output.length, worker: worker.output.length, extra: extraDeliveries() };
      await sendBacklog();
      const injectedAt = Date.now();
      const waiting = new Set([...acknowledged.keys()].filter((subject) => !delivered.has(subject)));
      log(`${fault}: ${FAULTS[fault]}; ${waiting.size} accepted emails not yet delivered`);
      await breakDatabase(fault);
      const returnedAt = Date.now();
      log(`${fault}: the database is back after ${((returnedAt - injectedAt) / 1000).toFixed(1)} s`);
      // A few seconds of the stream after the return, then everything accepted until then delivered.
      await sleep(3000);
      const settledAt = Date.now();
      await eventually(() => deliveredUpTo(settledAt), 90_000).catch((error: Error) => {
        const missing = [...acknowledged.entries()].filter(([subject, at]) => at < settledAt && !delivered.has(subject)).length;
        throw error.message.startsWith('the ') ? error : new Error(`${missing} emails accepted before ${new Date(settledAt).toISOString()} were not delivered`);
      });
      // And recorded so: a send whose outcome the fault kept from being written is tried again (a job
      // left held would wait for the 5-minute lock timeout).
      const unrecorded = async () =>
        Number((await cluster.query(`select count(*) as n from emails where last_event <> 'delivered' and created_at < '${toTimestamp(settledAt)}'`)).rows[0].n);
      await eventually(async () => (await unrecorded()) === 0, 90_000).catch(async () => {
        throw new Error(`${await unrecorded()} emails accepted before ${new Date(settledAt).toISOString()} are not recorded as delivered`);
      });
      const during = answers.slice(marks.answers).filter((a) => a.at >= injectedAt && a.at <= returnedAt);
      const counts = new Map<string, number>();
      for (const a of during) counts.set(`${a.via} ${a.code}`, (counts.get(`${a.via} ${a.code}`) ?? 0) + 1);
      // Emails accepted before the fault and delivered after the return: those it delayed.
      const late = [...acknowledged.entries()]
        .filter(([, at]) => at < injectedAt)
        .map(([subject]) => delivered.get(subject)![0]!)
        .filter((at) => at > returnedAt);
      return {
        fault,
        firstMs: late.length > 0 ? Math.min(...late) - returnedAt : undefined,
        lastMs: late.length > 0 ? Math.max(...late) - returnedAt : undefined,
        answers: counts,
        forbidden: answers.slice(marks.answers).filter((a) => !a.allowed),
        duplicates: extraDeliveries() - marks.extra,
        lines: { api: countLines(api, marks.api), worker: countLines(worker, marks.worker) },
        running: running(api) && running(worker),
      };
    },
    accepted: () => acknowledged.size,
    stderr: () => `API stderr:\n${api.stderr.slice(-4000)}\nworker stderr:\n${worker.stderr.slice(-4000)}`,
    async close() {
      sending = false;
      await Promise.all(clients);
      for (const p of [api, worker]) {
        if (running(p)) {
          const exited = new Promise((resolve) => p.child.once('exit', resolve));
          p.child.kill('SIGTERM');
          await exited;
        }
      }
      await sink.close();
      await cluster.destroy();
    },
  };
}
