// Ten POST /emails of 40 MB each (a 29 MB attachment, base64), sent at once by ten clients that retry
// on 429 as its retry-after says, into one Mailroom process (API and worker, capture mode). Measured:
// the peak memory the process added (VmHWM beside the same reading taken idle), as a ratio to the bytes
// of the ten requests, with the default bound on large bodies and with the bound lifted, in one run.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';

const CLIENTS = 10;
const MB = 1024 * 1024;

/** The process's peak resident memory so far, in bytes (Linux). */
function peakRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB$/m)!;
  return Number(line[1]) * 1024;
}

/** One POST, its status and retry-after. */
function post(url: string, body: Buffer): Promise<{ status: number; retryAfter: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json', 'content-length': body.length },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: Number(res.headers['retry-after'] ?? 0) }));
    });
    req.end(body);
  });
}

async function sendUntilAccepted(url: string, body: Buffer): Promise<number> {
  for (let refused = 0; ; refused++) {
    const { status, retryAfter } = await post(url, body);
    if (status === 200) return refused;
    if (status !== 429) throw new Error(`POST /emails answered ${status}`);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  }
}

async function run(body: Buffer, env: Record<string, string>): Promise<{ added: number; refused: number; seconds: number }> {
  const mailroom = await startMailroom({ env, role: process.env.BENCH_ROLE });
  try {
    const idle = peakRss(mailroom.pid);
    const started = performance.now();
    const refused = await Promise.all(Array.from({ length: CLIENTS }, () => sendUntilAccepted(mailroom.url, body)));
    const seconds = (performance.now() - started) / 1000;
    return { added: peakRss(mailroom.pid) - idle, refused: refused.reduce((a, b) => a + b, 0), seconds };
  } finally {
    await mailroom.stop();
  }
}

export async function benchLargeSends(): Promise<Figure[]> {
  const content = Buffer.alloc(29 * MB, 7).toString('base64');
  const body = Buffer.from(
    JSON.stringify({ from: 'a@example.com', to: 'b@example.com', subject: 'Large', text: 'See attached.', attachments: [{ filename: 'big.bin', content }] }),
  );
  const total = body.length * CLIENTS;
  const bounded = await run(body, {});
  const unbounded = await run(body, { HTTP_MAX_LARGE_BODIES: String(CLIENTS) });
  return [
    { name: `request bytes, ${CLIENTS} x ${(body.length / MB).toFixed(1)} MB`, value: total / MB, unit: 'MB' },
    { name: 'peak memory added, default bound (2)', value: bounded.added / MB, unit: 'MB' },
    { name: 'peak memory added / request bytes, default bound', value: bounded.added / total, unit: 'ratio' },
    { name: '429 answers retried, default bound', value: bounded.refused, unit: 'requests' },
    { name: 'seconds to accept all, default bound', value: bounded.seconds, unit: 's' },
    { name: `peak memory added, bound lifted (${CLIENTS})`, value: unbounded.added / MB, unit: 'MB' },
    { name: 'peak memory added / request bytes, bound lifted', value: unbounded.added / total, unit: 'ratio' },
    { name: 'seconds to accept all, bound lifted', value: unbounded.seconds, unit: 's' },
    { name: 'peak memory added, default / lifted', value: bounded.added / unbounded.added, unit: 'ratio' },
  ];
}
