import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { eventually, startApp } from '../support/harness.ts';

// An overloaded process sheds new requests with 503 and Retry-After rather than answering everyone
// late, and its health check says so. The app's own event loop is made to lag: every turn of it runs
// 1.3 s of work, as a process far behind its load does. The requests come from another process, whose
// loop is free.

/** One request from a process of its own: status, Retry-After and body. */
function request(url: string, token?: string): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const script = `fetch(process.argv[1], { headers: process.argv[2] ? { authorization: 'Bearer ' + process.argv[2] } : {} })
    .then(async (r) => console.log(JSON.stringify({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() })))`;
  const child = spawn(process.execPath, ['-e', script, url, token ?? ''], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the client exited ${code}`)))));
}

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('load shedding', () => {
  it('sheds new requests with 503 service_unavailable and Retry-After while the event loop lags more than a second; GET /health says so; then serves again', async () => {
    const t = await startApp('sqlite', { worker: false });
    const hog = setInterval(() => busy(1300), 0);
    try {
      const shed = await eventually(async () => {
        const answer = await request(`${t.url}/emails`, t.token);
        return answer.status === 503 ? answer : undefined;
      }, 90_000);
      assert.equal(shed.retryAfter, '5');
      assert.equal(shed.body.statusCode, 503);
      assert.equal(shed.body.name, 'service_unavailable');
      assert.match(shed.body.message, /^Mailroom is overloaded \(its event loop lags \d+ ms\); try again in a few seconds\.$/);
      const health = await request(`${t.url}/health`);
      assert.equal(health.status, 503);
      assert.equal(health.body.load, 'overloaded');
      assert.equal(health.body.database, undefined, 'the database is not what is down');
      assert.match(health.body.message, /^Mailroom is overloaded: its event loop lags \d+ ms\.$/);
    } finally {
      clearInterval(hog);
    }
    try {
      await eventually(async () => (await request(`${t.url}/emails`, t.token)).status === 200, 30_000);
      assert.equal((await request(`${t.url}/health`)).status, 200);
    } finally {
      await t.close();
    }
  });
});
