// The dashboard's email list at size: with n emails stored, its first page and a page deep in it
// (keyset: no OFFSET), beside GET /emails with the same page size and cursor, turn by turn in one run.
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import type { Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';
import { median } from './stats.ts';

const PAGE = 50;
const TURNS = Number(process.env.BENCH_TURNS ?? 8);
const TURN_S = Number(process.env.BENCH_SECONDS ?? 1.5);
const CONNECTIONS = 8;

async function rate(url: string, headers: Record<string, string>, seconds = TURN_S): Promise<number> {
  const result = await autocannon({ url, method: 'GET', connections: CONNECTIONS, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.total / seconds;
}

/** n emails, 100 to a batch, accepted by an API process (no worker: they stay queued, as the list does not care). */
async function fill(url: string, n: number): Promise<void> {
  const batch = (k: number) =>
    JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ from: 'Acme <news@example.com>', to: `reader${k * 100 + i}@example.org`, subject: `Issue ${k * 100 + i}`, text: 'x' })));
  for (let k = 0; k < n / 100; k += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, n / 100 - k) }, async (_, j) => {
        const response = await fetch(`${url}/emails/batch`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' }, body: batch(k + j) });
        if (!response.ok) throw new Error(`batch: ${response.status} ${await response.text()}`);
      }),
    );
  }
}

/** A signed-in dashboard session's cookie, as a browser gets it. */
async function signIn(url: string): Promise<string> {
  const form = await fetch(`${url}/dashboard/sign-in`);
  const first = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const answer = await fetch(`${url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: first, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, api_key: BENCH_KEY, next: '/dashboard/emails' }),
  });
  return answer.headers.getSetCookie()[0]!.split(';')[0]!;
}

export async function benchDashboard(options: { n: number }): Promise<Figure[]> {
  const mailroom = await startMailroom({ role: 'api', env: { LOG_LEVEL: 'warn' } });
  try {
    await fill(mailroom.url, options.n);
    const db = new SQLite(mailroom.databaseUrl, { readonly: true });
    const deep = (db.prepare('select id from emails order by id desc limit 1 offset ?').get(options.n - 2 * PAGE) as { id: string }).id;
    db.close();
    const cookie = await signIn(mailroom.url);
    const api = { authorization: `Bearer ${BENCH_KEY}` };
    const page = { cookie, accept: 'text/html' };
    const targets = {
      dashboardFirst: [`${mailroom.url}/dashboard/emails`, page],
      dashboardDeep: [`${mailroom.url}/dashboard/emails?after=${deep}`, page],
      apiFirst: [`${mailroom.url}/emails?limit=${PAGE}`, api],
      apiDeep: [`${mailroom.url}/emails?limit=${PAGE}&after=${deep}`, api],
    } as const;
    type Target = keyof typeof targets;
    const names = Object.keys(targets) as Target[];
    for (const name of names) await rate(targets[name][0], targets[name][1], 1);
    const turns: Record<Target, number>[] = [];
    for (let i = 0; i < TURNS; i++) {
      // Each turn in another order, so that none is always first after the same one.
      const turn = {} as Record<Target, number>;
      for (const name of names.map((_, k) => names[(k + i) % names.length]!)) turn[name] = await rate(targets[name][0], targets[name][1]);
      turns.push(turn);
    }
    const of = (name: Target) => median(turns.map((t) => t[name]));
    // A cost is the inverse of a rate: the deep page costs first/deep times the first page.
    const ratio = (cheap: Target, dear: Target) => median(turns.map((t) => t[cheap] / t[dear]));
    return [
      { name: `dashboard: emails list, first page of ${PAGE}, ${options.n.toLocaleString('en-US')} emails`, value: of('dashboardFirst'), unit: 'req/s' },
      { name: 'dashboard: emails list, a page near the end', value: of('dashboardDeep'), unit: 'req/s' },
      { name: `GET /emails?limit=${PAGE}, first page`, value: of('apiFirst'), unit: 'req/s' },
      { name: 'GET /emails, the same page near the end', value: of('apiDeep'), unit: 'req/s' },
      { name: 'dashboard: deep page cost / first page cost (target <= 1.5)', value: ratio('dashboardFirst', 'dashboardDeep'), unit: 'ratio' },
      { name: 'dashboard page cost / API JSON cost, first page (target <= 3)', value: ratio('apiFirst', 'dashboardFirst'), unit: 'ratio' },
      { name: 'dashboard page cost / API JSON cost, deep page (target <= 3)', value: ratio('apiDeep', 'dashboardDeep'), unit: 'ratio' },
    ];
  } finally {
    await mailroom.stop();
  }
}
