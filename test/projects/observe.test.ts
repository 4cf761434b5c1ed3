// Projects (docs/projects.md): what one project's requests and emails leave behind (request logs,
// metrics, usage) is its own, and the public links of its emails (tracking, downloads, shares) reach
// only the email they were signed for, whose project the open or click counts in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreateEmailOptions, Resend } from 'resend';
import { foldMetrics } from '../../src/store/email-metrics.ts';
import * as emails from '../../src/store/emails.ts';
import { dialects, eventually, followLink, rowCount, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';
import { cookiesOf, signIn } from '../support/dashboard-forms.ts';
import { ADMIN_KEY, MISSING_ID, startTwoProjects } from '../support/projects.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const PUBLIC_URL = 'https://mail.example.com';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const HTML = '<p><a href="https://shop.example/a">Shop</a></p>';

const pixelOf = (html: string) => html.match(/<img src="(https:\/\/mail\.example\.com\/track\/open\/[^"]+)"/)![1]!;
const clickOf = (html: string) => html.match(/href="(https:\/\/mail\.example\.com\/track\/click\/[^"]+)"/)![1]!;

for (const dialect of dialects) {
  describe(`projects: logs, metrics, usage, tracking and links (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let t: TestApp;
    let a: Resend;
    let b: Resend;
    let bToken: string;
    /** Each project's emails: A sends two, B one, each from a tracked domain of its own. */
    const sent = { a: [] as string[], b: [] as string[] };
    const html = new Map<string, string>();

    /** A JSON GET with a key: status and body. */
    const get = async (token: string, path: string) => {
      const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, body: (await response.json()) as any };
    };
    const metricsOf = async (token: string, query = '') => (await get(token, `/emails/metrics?metrics=sent,delivered,opened,clicked${query}`)).body.totals;

    /** Sends through the relay and waits for the delivery: the html its recipient got. */
    async function deliver(client: Resend, from: string, extra: Partial<CreateEmailOptions> = {}): Promise<string> {
      const { data, error } = await client.emails.send({ from, to: 'reader@example.org', subject: 'Hello', html: HTML, ...extra } as CreateEmailOptions);
      assert.equal(error, null, JSON.stringify(error));
      const id = data.id;
      const message = await eventually(() => smtp.messages.find((m) => m.parsed.messageId === `<${id}@${from.split('@')[1]}>`));
      html.set(id, String(message.parsed.html));
      await eventually(async () => (await emails.findEmailById(t.ctx.db, id))?.last_event === 'delivered' || undefined);
      return id;
    }

    before(async () => {
      smtp = await startSmtpServer();
      ({ t, a, b, bToken } = await startTwoProjects(dialect, { env: { ...INBOUND_ENV, SMTP_URL: smtp.url, MAILROOM_PUBLIC_URL: PUBLIC_URL } }));
      inbound = await startInbound(t);
      await a.domains.create({ name: 'a-tracked.test', openTracking: true, clickTracking: true });
      await b.domains.create({ name: 'b-tracked.test', openTracking: true, clickTracking: true });
      sent.a.push(await deliver(a, 'news@a-tracked.test', { attachments: [{ filename: 'a.txt', content: Buffer.from('for A') }] }));
      sent.a.push(await deliver(a, 'news@a-tracked.test'));
      sent.b.push(await deliver(b, 'news@b-tracked.test', { attachments: [{ filename: 'b.txt', content: Buffer.from('for B') }] }));
    });
    after(async () => {
      await inbound?.close();
      await t?.close();
      await smtp?.close();
    });

    it("shows B none of A's request logs: not listed, and A's log id answers as a missing one", async () => {
      const aLogs = await eventually(async () => {
        const { data } = await a.logs.list({ limit: 100 });
        return data!.data.filter((log) => log.endpoint === '/emails').length >= 2 && data!.data;
      });
      const bLogs = await eventually(async () => {
        const { data } = await b.logs.list({ limit: 100 });
        return data!.data.some((log) => log.endpoint === '/emails') && data!.data;
      });
      const aIds = new Set(aLogs.map((log) => log.id));
      assert.ok(bLogs.every((log) => !aIds.has(log.id)), 'B lists none of A’s logs');
      assert.equal(bLogs.filter((log) => log.endpoint === '/emails').length, 1, 'B’s one send');
      assert.ok(aLogs.every((log) => !bLogs.some((own) => own.id === log.id)));
      const missing = await b.logs.get(MISSING_ID);
      const foreign = await b.logs.get(aLogs[0]!.id);
      assert.equal(foreign.error?.statusCode, 404);
      assert.deepEqual([foreign.error?.statusCode, foreign.error?.name, foreign.error?.message], [missing.error?.statusCode, missing.error?.name, missing.error?.message]);
      assert.equal((await a.logs.get(aLogs[0]!.id)).data?.id, aLogs[0]!.id, 'A reads its own');
    });

    it("counts only the key's project's emails in metrics and usage", async () => {
      const aTotals = await metricsOf(t.token);
      const bTotals = await metricsOf(bToken);
      assert.deepEqual([aTotals.sent, aTotals.delivered], [2, 2]);
      assert.deepEqual([bTotals.sent, bTotals.delivered], [1, 1]);
      // Another project's domain or email named as a filter counts nothing.
      const aDomain = (await a.domains.list()).data!.data[0]!.id;
      assert.equal((await metricsOf(bToken, `&domain_id=${aDomain}`)).sent, 0);
      assert.equal((await metricsOf(bToken, `&email_id=${sent.a[0]}`)).sent, 0);
      assert.equal((await metricsOf(bToken, '&dimensions=email')).sent, 1);
      const byDomain = (await get(bToken, '/emails/metrics?metrics=sent&dimensions=domain')).body.data;
      assert.deepEqual(byDomain.map((row: any) => [row.domain_name, row.sent]), [['b-tracked.test', 1]]);
      const aUsage = (await a.usage.get()).data!;
      const bUsage = (await b.usage.get()).data!;
      assert.deepEqual([aUsage.emails.daily.sent, aUsage.emails.monthly.sent, aUsage.domains.used], [2, 2, 1]);
      assert.deepEqual([bUsage.emails.daily.sent, bUsage.emails.monthly.sent, bUsage.domains.used], [1, 1, 1]);
    });

    it('keeps two projects\' counts of one sender domain apart once the rollup folds them', async () => {
      // A domain no project registered (tests need no verified domain): both may send from it.
      await deliver(a, 'hi@unregistered.test');
      await deliver(b, 'hi@unregistered.test');
      await t.ctx.writer.transaction((tx) => foldMetrics(tx, 10_000));
      assert.equal(await rowCount(t, 'email_metric_deltas'), 0, 'every increment folded');
      const query = '/emails/metrics?metrics=sent&dimensions=domain';
      const rowOf = async (token: string) => (await get(token, query)).body.data.find((row: any) => row.domain_name === 'unregistered.test');
      assert.deepEqual([(await rowOf(t.token))?.sent, (await rowOf(bToken))?.sent], [1, 1]);
    });

    it("counts an open and a click through A's email's links for A only", async () => {
      const id = sent.a[1]!;
      assert.equal((await followLink(t, pixelOf(html.get(id)!), { headers: { 'user-agent': BROWSER } })).status, 200);
      assert.equal((await followLink(t, clickOf(html.get(id)!), { headers: { 'user-agent': BROWSER }, redirect: 'manual' })).status, 302);
      await eventually(async () => (await emails.listEvents(t.ctx.db, id)).some((e) => e.type === 'clicked') || undefined);
      const aTotals = await metricsOf(t.token);
      const bTotals = await metricsOf(bToken);
      assert.deepEqual([aTotals.opened, aTotals.clicked], [1, 1]);
      assert.deepEqual([bTotals.opened, bTotals.clicked], [0, 0]);
      assert.deepEqual((await metricsOf(bToken, '&dimensions=email')).opened, 0);
    });

    it("does not turn a download or share link of A's email into one of B's email", async () => {
      const aFile = (await a.emails.attachments.list({ emailId: sent.a[0]! })).data!.data[0]!;
      const bFile = (await b.emails.attachments.list({ emailId: sent.b[0]! })).data!.data[0]!;
      assert.equal(await (await followLink(t, aFile.download_url)).text(), 'for A');
      // The path names the file the link was signed for: A's link pointed at B's file, its signature kept.
      const swapped = new URL(aFile.download_url);
      swapped.pathname = new URL(bFile.download_url).pathname;
      assert.notEqual(swapped.href, aFile.download_url);
      assert.equal((await followLink(t, swapped.href)).status, 404);

      const share = (await a.emails.share(sent.a[0]!)).data!.url;
      assert.equal((await followLink(t, share)).status, 200);
      // The token's payload is base64url of a kind byte, the email id's 16 bytes and the expiry; the signature is kept.
      const [base, token] = [share.slice(0, share.lastIndexOf('/') + 1), share.slice(share.lastIndexOf('/') + 1)];
      const [payload, signature] = token.split('.') as [string, string];
      const bytes = Buffer.from(payload, 'base64url');
      Buffer.from(sent.b[0]!.replaceAll('-', ''), 'hex').copy(bytes, 1);
      const pointed = await followLink(t, `${base}${bytes.toString('base64url')}.${signature}`);
      assert.equal(pointed.status, 404);
      assert.doesNotMatch(await pointed.text(), /for B|b-tracked/);
      // Nor does B's key share A's email: it answers as a missing one.
      const missing = await b.emails.share(MISSING_ID);
      const foreign = await b.emails.share(sent.a[0]!);
      assert.deepEqual([foreign.error?.statusCode, foreign.error?.message], [missing.error?.statusCode, missing.error?.message]);
      assert.equal(foreign.error?.statusCode, 404);
    });

    it("shares a received email only through its own project's key", async () => {
      await receivingDomain(t, 'a-inbox.test');
      const answer = await sendTo(inbound.port, { envelope: { from: 'x@sender.test', to: ['help@a-inbox.test'] }, from: 'x@sender.test', to: 'help@a-inbox.test', subject: 'Hi', text: 'hi' });
      const id = /OK ([0-9a-f-]{36})$/.exec(answer.response)![1]!;
      assert.equal((await a.emails.share(id)).data?.id, id);
      const missing = await b.emails.share(MISSING_ID);
      const foreign = await b.emails.share(id);
      assert.equal(foreign.error?.statusCode, 404);
      assert.deepEqual([foreign.error?.statusCode, foreign.error?.message], [missing.error?.statusCode, missing.error?.message]);
    });

    it("shows the whole install's figures (Prometheus, the TLS page) to the admin key alone", async () => {
      for (const token of [t.token, bToken]) {
        const response = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await response.json()) as { name: string };
        assert.deepEqual([response.status, body.name], [401, 'restricted_api_key']);
      }
      const scrape = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.equal(scrape.status, 200);
      assert.match(await scrape.text(), /^# HELP /m);
      const tls = async (key: string) => (await fetch(`${t.url}/dashboard/tls`, { headers: { cookie: cookiesOf(await signIn(t, key)) } })).status;
      assert.deepEqual([await tls(t.token), await tls(bToken), await tls(ADMIN_KEY)], [403, 403, 200]);
    });
  });
}
