import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordEngagement, recordEvents, type Engagement } from '../../../src/domain/events/email-events.ts';
import * as emails from '../../../src/store/emails.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../../support/inbound.ts';

const PUBLIC_URL = 'https://mail.example.com';
const MISSING = '01a2007a-0000-7000-8000-000000000000';
const A = 'https://example.com/pricing?plan=pro#top';
const B = 'https://example.com/docs';
const C = 'https://example.com/blog';
const ADDRESSES = ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com', 'bounced@resend.dev', 'complained@resend.dev', 'suppressed@resend.dev'];
const html = `<p>Hi</p><a href="${A}">a</a> <a href="${B}">b</a> <a href="${C}">c</a> <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">unsubscribe</a>`;

for (const dialect of dialects) {
  describe(`a broadcast's recipients and clicked links, and usage, through the SDK (${dialect})`, () => {
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let broadcast: string;
    let topic: string;
    /** Each address's contact and email. */
    const contacts = new Map<string, string>();
    const emailOf = new Map<string, string>();

    async function record(address: string, engagement: Omit<Engagement, 'recipient'>): Promise<void> {
      const email = (await emails.findEmailById(t.ctx.db, emailOf.get(address)!))!;
      await t.ctx.writer.transaction((tx) => recordEngagement(t.ctx, tx, email, { ...engagement, recipient: address }, '2026-11-27 10:00:00.000+00'));
    }

    /** The expected row of `address`: its email's id, its contact, and `fields`; rows come newest email first. */
    const row = (address: string, fields: { count?: number; bounce_type?: string; clicked_links?: object[] } = {}) => ({ id: emailOf.get(address)!, contact_id: contacts.get(address)!, email: address, ...fields });
    const newestFirst = <R extends { id: string }>(rows: R[]) => [...rows].sort((a, b) => (a.id < b.id ? 1 : -1));

    before(async () => {
      t = await startApp(dialect, { env: { MAILROOM_PUBLIC_URL: PUBLIC_URL, ...INBOUND_ENV } });
      inbound = await startInbound(t);
      const segment = (await t.resend.segments.create({ name: 'Everyone' })).data!.id;
      topic = (await t.resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_in', visibility: 'public' } as never)).data!.id;
      for (const email of ADDRESSES) contacts.set(email, (await t.resend.contacts.create({ email, segments: [{ id: segment }] })).data!.id);
      broadcast = (await t.resend.broadcasts.create({ from: 'Acme <news@example.com>', subject: 'News', html, segmentId: segment, send: true })).data!.id;
      await eventually(async () => (await t.resend.broadcasts.get(broadcast)).data!.status === 'sent');
      for (const email of await t.ctx.db.selectFrom('emails').select(['id', 'to']).where('broadcast_id', '=', broadcast).execute()) {
        emailOf.set(JSON.parse(email.to)[0], email.id);
      }
      await eventually(async () => {
        const states = await t.ctx.db.selectFrom('emails').select('last_event').where('broadcast_id', '=', broadcast).execute();
        return states.length === ADDRESSES.length && states.every((s) => ['delivered', 'bounced', 'complained', 'suppressed'].includes(s.last_event));
      });

      await record('ann@example.com', { type: 'opened' });
      await record('ann@example.com', { type: 'clicked', link: A });
      await record('ann@example.com', { type: 'clicked', link: B });
      await record('ann@example.com', { type: 'clicked', link: A });
      await record('ann@example.com', { type: 'opened' });
      await record('bob@example.com', { type: 'opened', bot: 'HEAD request' });
      await record('bob@example.com', { type: 'clicked', link: A, bot: 'a scanner, seconds after delivery' });
      await record('bob@example.com', { type: 'opened' });
      await record('cy@example.com', { type: 'clicked', link: B });
      await record('cy@example.com', { type: 'clicked', link: C });

      // dee leaves through the List-Unsubscribe link of the message she was sent, one-click; cy through
      // the page's forms, a topic and then everything.
      await unsubscribe('dee@example.com', 'List-Unsubscribe=One-Click');
      await unsubscribe('cy@example.com', `topic_id=${topic}`);
      await unsubscribe('cy@example.com', 'everything=1');
    });

    /** POSTs `form` to the unsubscribe link of the message `address` was sent, with no API key. */
    async function unsubscribe(address: string, form: string): Promise<void> {
      const sent = (await emails.findSentMessage(t.ctx.db, emailOf.get(address)!))!.toString();
      const link = /(?:^|\r\n)List-Unsubscribe:\s+<([^>]+)>/.exec(sent)![1]!;
      const response = await fetch(`${t.url}${link.slice(PUBLIC_URL.length)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      assert.equal(response.status, 200, await response.text());
    }
    after(async () => {
      await inbound.close();
      await t.close();
    });

    const recipients = async (type: string, options: object = {}) => {
      const { data, error } = await t.resend.broadcasts.recipients(broadcast, { type, ...options } as never);
      assert.equal(error, null);
      return data;
    };

    it('lists who was sent, delivered, bounced (with the bounce type), complained and suppressed', async () => {
      const list = (addresses: string[], fields: object = {}) => ({ object: 'list', has_more: false, data: newestFirst(addresses.map((a) => row(a, fields))) });
      const sent = ADDRESSES.filter((a) => a !== 'suppressed@resend.dev');
      assert.deepEqual(await recipients('sent'), list(sent));
      assert.deepEqual(await recipients('delivered'), list(sent.filter((a) => a !== 'bounced@resend.dev')));
      const bounced = list(['bounced@resend.dev'], { bounce_type: 'permanent' });
      assert.deepEqual(await recipients('bounced'), bounced);
      assert.deepEqual(await recipients('bounced', { bounceType: 'permanent' }), bounced);
      assert.deepEqual(await recipients('bounced', { bounceType: 'transient' }), list([]));
      assert.deepEqual(await recipients('complained'), list(['complained@resend.dev']));
      assert.deepEqual(await recipients('suppressed'), list(['suppressed@resend.dev']));
    });

    it("counts opens and clicks, a bot's aside, with each recipient's links", async () => {
      assert.deepEqual(await recipients('opened'), {
        object: 'list',
        has_more: false,
        data: newestFirst([row('ann@example.com', { count: 2 }), row('bob@example.com', { count: 1 })]),
      });
      assert.deepEqual(await recipients('clicked'), {
        object: 'list',
        has_more: false,
        data: newestFirst([
          row('ann@example.com', { count: 3, clicked_links: [{ url: A, clicks: 2 }, { url: B, clicks: 1 }] }),
          row('cy@example.com', { count: 2, clicked_links: [{ url: C, clicks: 1 }, { url: B, clicks: 1 }] }),
        ]),
      });
    });

    it('lists the unsubscribes made through the link, one-click or the page, and narrows to one address in any case', async () => {
      const unsubscribed = newestFirst([row('cy@example.com'), row('dee@example.com')]);
      assert.deepEqual(await recipients('unsubscribed'), { object: 'list', has_more: false, data: unsubscribed });
      for (const address of ['cy@example.com', 'dee@example.com']) assert.equal((await t.resend.contacts.get(address)).data!.unsubscribed, true);
      const events = await t.ctx.db.selectFrom('email_events').select('recipient').where('type', '=', 'unsubscribed').orderBy('id').execute();
      assert.deepEqual(events.map((e) => e.recipient), ['dee@example.com', 'cy@example.com', 'cy@example.com'], 'one event per change');
      assert.deepEqual(await recipients('opened', { email: 'ANN@example.com' }), { object: 'list', has_more: false, data: [row('ann@example.com', { count: 2 })] });
      assert.deepEqual(await recipients('opened', { email: 'cy@example.com' }), { object: 'list', has_more: false, data: [] });
    });

    it("answers Resend's broadcast metrics from the counts it keeps, each with its percentage, and its links", async () => {
      const { data, error } = await t.resend.get<Record<string, unknown>>(`/broadcasts/${broadcast}/metrics`);
      assert.equal(error, null, JSON.stringify(error));
      const share = (total: number, percentage: number) => ({ total, percentage });
      assert.deepEqual(data, {
        object: 'broadcast_metrics',
        broadcast_id: broadcast,
        status: 'sent',
        total: 7,
        sent: 6,
        remaining: 0,
        delivered: share(5, 83.33),
        opened: share(2, 40),
        clicked: share(2, 40),
        // As GET /emails/metrics counts them: an unsubscribe event each (cy's topic, then everything).
        unsubscribed: share(3, 60),
        bounced: share(1, 16.67),
        complained: share(1, 20),
        suppressed: share(1, 14.29),
        clicked_links: [
          { url: A, clicks: 2, unique_clicks: 1, percentage: 20 },
          { url: B, clicks: 2, unique_clicks: 2, percentage: 40 },
          { url: C, clicks: 1, unique_clicks: 1, percentage: 20 },
        ],
      });
      assert.deepEqual((await t.resend.get(`/broadcasts/${MISSING}/metrics`)).error, { name: 'not_found', message: 'Broadcast not found', statusCode: 404 });
    });

    it('answers GET /broadcasts/metrics over the emails of broadcasts only, each row naming its broadcast', async () => {
      const plain = (await t.resend.emails.send({ from: 'a@example.com', to: 'delivered@resend.dev', subject: 'not a broadcast', text: 'x' })).data!.id;
      await eventually(async () => (await t.resend.emails.get(plain)).data?.last_event === 'delivered');
      const range = 'start_date=2020-01-01&metrics=sent,delivered,unique_opened,open_rate';
      const all = await t.resend.get<{ totals: Record<string, number> }>(`/emails/metrics?${range}`);
      const ofBroadcasts = await t.resend.get<{ object: string; totals: Record<string, number>; data: object[] }>(`/broadcasts/metrics?${range}&dimensions=broadcast`);
      assert.equal(ofBroadcasts.error, null, JSON.stringify(ofBroadcasts.error));
      assert.equal(all.data!.totals.sent, 7, 'the plain email counts among all emails');
      const totals = { sent: 6, delivered: 5, unique_opened: 2, open_rate: 0.4 };
      assert.deepEqual([ofBroadcasts.data.object, ofBroadcasts.data.totals], ['metrics', totals]);
      assert.deepEqual(ofBroadcasts.data.data, [{ id: broadcast, name: null, ...totals }]);
      const byPeriod = await t.resend.get<{ data: Record<string, unknown>[] }>(`/broadcasts/metrics?${range}&dimensions=period,broadcast&broadcast_id=${broadcast}`);
      assert.deepEqual(Object.keys(byPeriod.data!.data[0]!), ['period', 'id', 'name', 'sent', 'delivered', 'unique_opened', 'open_rate']);
      const refused = await t.resend.get(`/broadcasts/metrics?dimensions=domain`);
      assert.equal(refused.error?.statusCode, 422);
      assert.match(refused.error.message, /`dimensions`.*period, broadcast/);
    });

    it('pages through recipients both ways', async () => {
      const all = (await recipients('delivered')).data;
      assert.equal(all.length, 5);
      const first = await recipients('delivered', { limit: 2 });
      assert.deepEqual(first, { object: 'list', has_more: true, data: all.slice(0, 2) });
      const second = await recipients('delivered', { limit: 2, after: first.data[1]!.id });
      assert.deepEqual(second, { object: 'list', has_more: true, data: all.slice(2, 4) });
      const third = await recipients('delivered', { limit: 2, after: second.data[1]!.id });
      assert.deepEqual(third, { object: 'list', has_more: false, data: all.slice(4) });
      assert.deepEqual(await recipients('delivered', { limit: 2, before: third.data[0]!.id }), { object: 'list', has_more: true, data: all.slice(2, 4) });
      assert.deepEqual(await recipients('delivered', { limit: 1, before: second.data[0]!.id }), { object: 'list', has_more: true, data: all.slice(1, 2) });
      assert.deepEqual(await recipients('delivered', { limit: 2, before: second.data[0]!.id }), { object: 'list', has_more: false, data: all.slice(0, 2) });
    });

    it('filters bounces by their type, page by page', async () => {
      const bounce = (address: string, response: string) =>
        t.ctx.writer.transaction(async (tx) => {
          const email = (await emails.findEmailById(tx, emailOf.get(address)!))!;
          await recordEvents(t.ctx, tx, email, [{ recipient: address, types: ['bounced'], response }], '2026-11-27 11:00:00.000+00');
        });
      await bounce('ann@example.com', '452 4.2.2 Mailbox full');
      await bounce('bob@example.com', 'no status here');
      const all = newestFirst([
        row('bounced@resend.dev', { bounce_type: 'permanent' }),
        row('ann@example.com', { bounce_type: 'transient' }),
        row('bob@example.com', { bounce_type: 'undetermined' }),
      ]);
      assert.deepEqual(await recipients('bounced'), { object: 'list', has_more: false, data: all });
      const list = (rows: object[]) => ({ object: 'list', has_more: false, data: rows });
      for (const type of ['permanent', 'transient', 'undetermined']) {
        const ofType = (rows: typeof all) => rows.filter((r) => r.bounce_type === type);
        assert.deepEqual(await recipients('bounced', { bounceType: type }), list(ofType(all)), type);
        // Each way, a page of one passes over the bounces of other types.
        assert.deepEqual(await recipients('bounced', { bounceType: type, limit: 1 }), list(ofType(all)), type);
        assert.deepEqual(await recipients('bounced', { bounceType: type, limit: 1, after: all[0]!.id }), list(ofType(all.slice(1))), type);
        assert.deepEqual(await recipients('bounced', { bounceType: type, limit: 1, before: all[2]!.id }), list(ofType(all.slice(0, 2))), type);
      }
      assert.deepEqual(await recipients('bounced', { email: 'Ann@Example.com', bounceType: 'permanent' }), { object: 'list', has_more: false, data: [] });
      assert.deepEqual(await recipients('bounced', { email: 'Ann@Example.com', bounceType: 'transient' }), { object: 'list', has_more: false, data: [all.find((r) => r.email === 'ann@example.com')] });
    });

    it('lists the clicked links, most clicked first, then the one clicked first, page by page', async () => {
      const links = await t.resend.broadcasts.clickedLinks(broadcast);
      assert.equal(links.error, null);
      const rows = links.data.data;
      assert.deepEqual(
        rows.map(({ id: _, ...link }) => link),
        [
          { url: A, clicks: 2, unique_clicks: 1 },
          { url: B, clicks: 2, unique_clicks: 2 },
          { url: C, clicks: 1, unique_clicks: 1 },
        ],
      );
      assert.equal(links.data.has_more, false);
      const page = async (options: object) => (await t.resend.broadcasts.clickedLinks(broadcast, options)).data!;
      assert.deepEqual(await page({ limit: 1 }), { object: 'list', has_more: true, data: rows.slice(0, 1) });
      assert.deepEqual(await page({ limit: 1, after: rows[0]!.id }), { object: 'list', has_more: true, data: rows.slice(1, 2) });
      assert.deepEqual(await page({ limit: 1, after: rows[1]!.id }), { object: 'list', has_more: false, data: rows.slice(2) });
      assert.deepEqual(await page({ limit: 2, before: rows[2]!.id }), { object: 'list', has_more: false, data: rows.slice(0, 2) });
      assert.deepEqual(await page({ limit: 1, before: rows[2]!.id }), { object: 'list', has_more: true, data: rows.slice(1, 2) });
    });

    it("answers bad queries 422 and an unknown broadcast 404, in Resend's shape", async () => {
      const get = async (path: string) => {
        const response = await t.fetch(path);
        return { status: response.status, body: (await response.json()) as { message: string } };
      };
      const invalid = async (path: string, message: RegExp) => {
        const { status, body } = await get(path);
        assert.equal(status, 422, path);
        assert.deepEqual(Object.keys(body).sort(), ['message', 'name', 'statusCode'], path);
        assert.match(body.message, message, path);
      };
      const base = `/broadcasts/${broadcast}`;
      await invalid(`${base}/recipients`, /`type`/);
      await invalid(`${base}/recipients?type=read`, /`type`.*"read"/);
      await invalid(`${base}/recipients?type=opened&bounce_type=permanent`, /`bounce_type`.*`bounced`/);
      await invalid(`${base}/recipients?type=bounced&bounce_type=soft`, /`bounce_type`.*"soft"/);
      await invalid(`${base}/recipients?type=opened&limit=0`, /between 1 and 100/);
      await invalid(`${base}/recipients?type=opened&limit=101`, /between 1 and 100/);
      await invalid(`${base}/recipients?type=opened&after=${MISSING}&before=${MISSING}`, /cannot be used together/);
      await invalid(`${base}/recipients?type=opened&after=nope`, /`after`/);
      await invalid(`${base}/clicked-links?limit=0`, /between 1 and 100/);
      await invalid(`${base}/clicked-links?before=nope`, /`before`/);
      await invalid(`${base}/clicked-links?after=${Buffer.from('2.x').toString('base64url')}`, /`after`/);

      const { error } = await t.resend.broadcasts.recipients(MISSING, { type: 'opened' });
      assert.deepEqual(error, { name: 'not_found', message: 'Broadcast not found', statusCode: 404 });
      const links = await t.resend.broadcasts.clickedLinks(MISSING);
      assert.deepEqual(links.error, { name: 'not_found', message: 'Broadcast not found', statusCode: 404 });
    });

    it('counts the usage of today and this month in UTC, and moves to the next day at midnight', async () => {
      // The 15th of next month, a second before midnight: the broadcast's emails are of another month.
      const now = new Date(t.clock.now());
      const evening = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 15, 23, 59, 59);
      t.advance(evening - t.clock.now());
      const send = async (options: object = {}) => (await t.resend.emails.send({ from: 'a@example.com', to: 'delivered@resend.dev', subject: 's', text: 'x', ...options })).data!.id;
      await send();
      await send();
      await t.resend.emails.cancel(await send({ scheduledAt: 'in 1 hour' }));
      await receivingDomain(t, 'inbox.test');
      await sendTo(inbound.port, { from: 'ada@sender.test', to: 'support@inbox.test', subject: 'hello', text: 'x' });

      const day = new Date(evening);
      const at = (d: number, month = 0) => new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + month, d)).toISOString();
      const usage = (daily: object, monthly: object) => ({
        object: 'usage',
        emails: { daily: { limit: null, ...daily }, monthly: { limit: null, ...monthly } },
        contacts: { used: ADDRESSES.length, limit: null },
        segments: { used: 1, limit: null },
        broadcasts: { used: 1, limit: null },
        ai_credits: { used: 0, limit: null, next_increase_at: null },
        automation_runs: { used: 0, limit: null, resets_at: at(1, 1) },
        domains: { used: 1, limit: null },
        rate_limit: { limit: null, duration: '1000ms' },
      });
      const before = await t.resend.usage.get();
      assert.equal(before.error, null);
      assert.deepEqual(before.data, usage({ used: 3, sent: 2, received: 1, resets_at: at(16) }, { used: 3, sent: 2, received: 1, resets_at: at(1, 1) }));

      t.advance(2000);
      await send();
      assert.deepEqual((await t.resend.usage.get()).data, usage({ used: 1, sent: 1, received: 0, resets_at: at(17) }, { used: 4, sent: 3, received: 1, resets_at: at(1, 1) }));
    });
  });
}

for (const dialect of dialects) {
  describe(`the bounces of one type among many (${dialect})`, () => {
    let t: TestApp;
    let broadcast: string;
    /** The bounced recipients, newest email first. */
    let all: { id: string; email: string }[];
    before(async () => {
      t = await startApp(dialect);
      const segment = (await t.resend.segments.create({ name: 'Many' })).data!.id;
      for (let i = 0; i < 205; i++) await t.resend.contacts.create({ email: `bounced+${i}@resend.dev`, segments: [{ id: segment }] });
      broadcast = (await t.resend.broadcasts.create({ from: 'news@example.com', subject: 'S', html: '<p>x</p>', segmentId: segment, send: true })).data!.id;
      const rows = async () => {
        const list: { id: string; email: string }[] = [];
        let after: string | undefined;
        for (;;) {
          const { data } = await t.resend.broadcasts.recipients(broadcast, { type: 'bounced', limit: 100, after });
          list.push(...data!.data);
          if (!data!.has_more) return list;
          after = data!.data.at(-1)!.id;
        }
      };
      all = await eventually(async () => {
        const list = await rows();
        return list.length === 205 ? list : undefined;
      });
      // Two of them bounce again, for a while only: the newest answer is the bounce's type.
      for (const at of [0, 150]) {
        await t.ctx.writer.transaction(async (tx) => {
          const email = (await emails.findEmailById(tx, all[at]!.id))!;
          await recordEvents(t.ctx, tx, email, [{ recipient: all[at]!.email, types: ['bounced'], response: '452 4.2.2 Mailbox full' }], '2026-11-27 11:00:00.000+00');
        });
      }
    });
    after(() => t.close());

    it('finds them across the reads of a page (100 bounces each), both ways', async () => {
      const transient = async (options: object) => {
        const { data, error } = await t.resend.broadcasts.recipients(broadcast, { type: 'bounced', bounceType: 'transient', limit: 1, ...options } as never);
        assert.equal(error, null);
        return { has_more: data.has_more, emails: data.data.map((r) => r.email) };
      };
      const [first, second, last] = [all[0]!, all[150]!, all[204]!];
      assert.deepEqual(await transient({}), { has_more: true, emails: [first.email] });
      assert.deepEqual(await transient({ after: first.id }), { has_more: false, emails: [second.email] });
      assert.deepEqual(await transient({ before: last.id }), { has_more: true, emails: [second.email] });
      assert.deepEqual(await transient({ before: second.id }), { has_more: false, emails: [first.email] });
      assert.deepEqual(await transient({ limit: 100 }), { has_more: false, emails: [first.email, second.email] });
      const { data } = await t.resend.broadcasts.recipients(broadcast, { type: 'bounced', bounceType: 'permanent', limit: 100 });
      assert.equal(data!.data.length, 100);
      assert.equal(data!.has_more, true);
      assert.ok(!data!.data.some((r) => r.email === first.email));
    });
  });
}
