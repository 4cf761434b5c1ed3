import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GetEmailsMetricsOptions } from 'resend';
import { toTimestamp } from '../../../src/time/clock.ts';
import { recordEngagement, type Engagement } from '../../../src/domain/events/email-events.ts';
import { foldMetrics } from '../../../src/store/email-metrics.ts';
import * as emails from '../../../src/store/emails.ts';
import { dialects, eventually, rowCount, startApp, type TestApp } from '../../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../../support/inbound.ts';

// GET /emails/metrics over a fixed set of emails and events, made through the real paths at moments the
// test clock is moved to, against counts worked out by hand below.

const P1 = Date.UTC(2031, 1, 28, 23, 40); // New York Feb 28 18:40, Kolkata Mar 1 05:10
const P2 = Date.UTC(2031, 2, 1, 4, 20); // New York Feb 28 23:20, Kolkata Mar 1 09:50
const P3 = Date.UTC(2031, 2, 1, 5, 10); // New York Mar 1 00:10, Kolkata Mar 1 10:40
const P4 = Date.UTC(2031, 2, 3, 10, 0); // a Monday; New York 05:00, Kolkata 15:30
const NOW = P4 + 60_000;

type Counts = Record<string, number>;
const SERIES = ['received', 'sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked', 'unique_opened', 'unique_clicked', 'unsubscribed', 'failed'] as const;

// What each moment made (see the `before` below).
const G1: Counts = { sent: 3, delivered: 2, bounced: 1, complained: 1 }; // email A to delivered@, bounced@, complained@
// Email B to two addresses; C and D refused by their topic; a message received for two addresses.
const G2: Counts = { sent: 2, delivered: 2, failed: 2, received: 2 };
const G3: Counts = { opened: 3, unique_opened: 2, clicked: 1, unique_clicked: 1, unsubscribed: 1 }; // a bot's open counts nowhere
const G4: Counts = { opened: 1, clicked: 1, unique_clicked: 1 };

function sum(...groups: Counts[]): Counts {
  const total: Counts = Object.fromEntries(SERIES.map((m) => [m, 0]));
  for (const group of groups) for (const [m, n] of Object.entries(group)) total[m] = (total[m] ?? 0) + n;
  return total;
}

/** By zone and granularity: how many periods from Feb 27 (local) to now, and the counts of those that have any. */
const EXPECTED: Record<string, Record<string, { periods: number; buckets: Record<string, Counts> }>> = {
  UTC: {
    hourly: { periods: 107, buckets: { '2031-02-28T23:00:00+00:00': sum(G1), '2031-03-01T04:00:00+00:00': sum(G2), '2031-03-01T05:00:00+00:00': sum(G3), '2031-03-03T10:00:00+00:00': sum(G4) } },
    daily: { periods: 5, buckets: { '2031-02-28T00:00:00+00:00': sum(G1), '2031-03-01T00:00:00+00:00': sum(G2, G3), '2031-03-03T00:00:00+00:00': sum(G4) } },
    weekly: { periods: 2, buckets: { '2031-02-24T00:00:00+00:00': sum(G1, G2, G3), '2031-03-03T00:00:00+00:00': sum(G4) } },
    monthly: { periods: 2, buckets: { '2031-02-01T00:00:00+00:00': sum(G1), '2031-03-01T00:00:00+00:00': sum(G2, G3, G4) } },
  },
  'America/New_York': {
    hourly: { periods: 102, buckets: { '2031-02-28T18:00:00-05:00': sum(G1), '2031-02-28T23:00:00-05:00': sum(G2), '2031-03-01T00:00:00-05:00': sum(G3), '2031-03-03T05:00:00-05:00': sum(G4) } },
    daily: { periods: 5, buckets: { '2031-02-28T00:00:00-05:00': sum(G1, G2), '2031-03-01T00:00:00-05:00': sum(G3), '2031-03-03T00:00:00-05:00': sum(G4) } },
    weekly: { periods: 2, buckets: { '2031-02-24T00:00:00-05:00': sum(G1, G2, G3), '2031-03-03T00:00:00-05:00': sum(G4) } },
    monthly: { periods: 2, buckets: { '2031-02-01T00:00:00-05:00': sum(G1, G2), '2031-03-01T00:00:00-05:00': sum(G3, G4) } },
  },
  'Asia/Kolkata': {
    hourly: { periods: 112, buckets: { '2031-03-01T05:00:00+05:30': sum(G1), '2031-03-01T09:00:00+05:30': sum(G2), '2031-03-01T10:00:00+05:30': sum(G3), '2031-03-03T15:00:00+05:30': sum(G4) } },
    daily: { periods: 5, buckets: { '2031-03-01T00:00:00+05:30': sum(G1, G2, G3), '2031-03-03T00:00:00+05:30': sum(G4) } },
    weekly: { periods: 2, buckets: { '2031-02-24T00:00:00+05:30': sum(G1, G2, G3), '2031-03-03T00:00:00+05:30': sum(G4) } },
    monthly: { periods: 2, buckets: { '2031-03-01T00:00:00+05:30': sum(G1, G2, G3, G4) } },
  },
};

const pick = (row: Record<string, unknown>, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, row[k]]));

for (const dialect of dialects) {
  describe(`GET /emails/metrics (${dialect})`, () => {
    let t: TestApp;
    const ids: Record<'A' | 'B' | 'C' | 'D', string> = { A: '', B: '', C: '', D: '' };
    let shopDomainId = '';
    let inboxDomainId = '';
    let inbound: Awaited<ReturnType<typeof startInbound>>;

    const at = (ms: number) => t.advance(ms - t.clock.now());
    const eventCount = async (id: string) => (await emails.listEvents(t.ctx.db, id)).length;
    const engage = async (id: string, engagement: Engagement) => {
      const email = (await emails.findEmailById(t.ctx.db, id))!;
      await t.ctx.writer.transaction((tx) => recordEngagement(t.ctx, tx, email, engagement, toTimestamp(t.clock.now())));
    };
    const metrics = async (options: GetEmailsMetricsOptions) => {
      const { data, error } = await t.resend.emails.metrics(options);
      assert.equal(error, null);
      return data;
    };
    const refused = async (query: string) => {
      const response = await t.fetch(`/emails/metrics?${query}`);
      const body = (await response.json()) as { statusCode: number; name: string; message: string };
      assert.equal(response.status, 422, query);
      assert.equal(body.name, 'validation_error');
      return body.message;
    };

    before(async () => {
      t = await startApp(dialect, { env: INBOUND_ENV });
      inbound = await startInbound(t);
      inboxDomainId = (await receivingDomain(t, 'inbox.test')).id;
      at(P1);
      ids.A = (await t.resend.emails.send({ from: 'Acme <news@Acme.test>', to: ['delivered@resend.dev', 'bounced@resend.dev', 'complained@resend.dev'], subject: 'a', html: '<p>a</p>' })).data!.id;
      await eventually(async () => (await eventCount(ids.A)) === 7);

      at(P2);
      const topic = (await t.resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' })).data!.id;
      ids.B = (await t.resend.emails.send({ from: 'hi@shop.test', to: ['delivered@resend.dev', 'delivered+2@resend.dev'], subject: 'b', html: '<p>b</p>' })).data!.id;
      // Refused at acceptance (no contact, an opt-out topic): `failed`, written with the new email's rows.
      ids.C = (await t.resend.emails.send({ from: 'hi@shop.test', to: 'delivered+c@resend.dev', subject: 'c', html: '<p>c</p>', topicId: topic })).data!.id;
      ids.D = (await t.resend.emails.send({ from: 'hi@shop.test', to: 'delivered+d@resend.dev', subject: 'd', html: '<p>d</p>', topicId: topic })).data!.id;
      await eventually(async () => (await eventCount(ids.B)) === 4);
      await sendTo(inbound.port, { envelope: { from: 'ada@sender.test', to: ['support@inbox.test', 'sales@Inbox.test'] }, from: 'ada@sender.test', to: 'support@inbox.test', subject: 'hello', text: 'hi' });

      at(P3);
      await engage(ids.A, { type: 'opened', recipient: 'delivered@resend.dev' });
      await engage(ids.A, { type: 'opened', recipient: 'complained@resend.dev', bot: 'HEAD request' });
      await engage(ids.A, { type: 'opened', recipient: 'delivered@resend.dev' });
      await engage(ids.A, { type: 'clicked', recipient: 'delivered@resend.dev', link: 'https://acme.test/x' });
      await engage(ids.A, { type: 'unsubscribed', recipient: 'delivered@resend.dev' });
      await engage(ids.B, { type: 'opened', recipient: 'delivered+2@resend.dev' });

      at(P4);
      await engage(ids.B, { type: 'clicked', recipient: 'delivered+2@resend.dev', link: 'https://shop.test/y' });
      await engage(ids.B, { type: 'opened', recipient: 'delivered+2@resend.dev' });
      at(NOW);
      // A Mailroom domain named shop.test (none for acme.test), made once the sends are done.
      shopDomainId = (await t.resend.domains.create({ name: 'shop.test' })).data!.id;
    });
    after(async () => {
      await inbound?.close();
      await t?.close();
    });

    for (const [timezone, byGranularity] of Object.entries(EXPECTED)) {
      for (const [granularity, expected] of Object.entries(byGranularity)) {
        it(`counts each ${granularity} period in ${timezone}`, async () => {
          const answer = await metrics({ startDate: '2031-02-27', endDate: '2031-03-04', timezone, granularity: granularity as 'daily', metrics: [...SERIES], dimensions: ['period'] });
          assert.equal(answer.data!.length, expected.periods);
          for (const row of answer.data!) assert.deepEqual(pick(row, SERIES), expected.buckets[row.period!] ?? sum(), row.period);
          assert.deepEqual(Object.keys(expected.buckets).filter((p) => !answer.data!.some((row) => row.period === p)), []);
          assert.deepEqual(answer.totals, sum(G1, G2, G3, G4));
          assert.equal(answer.end_date, new Date(P4 + 15 * 60_000).toISOString(), 'a future end_date stops at now, rounded up to its slot');
        });
      }
    }

    // The tests above read increments still appended (no worker folds them here); those below, folded.
    it('answers the same while the increments are folded into the rollup, part or whole, and after', async () => {
      const question: GetEmailsMetricsOptions = { startDate: '2031-02-27', endDate: '2031-03-04', timezone: 'Asia/Kolkata', granularity: 'hourly', metrics: [...SERIES], dimensions: ['period', 'domain'] };
      const before = await metrics(question);
      const appended = await rowCount(t, 'email_metric_deltas');
      assert.ok(appended > 3);
      assert.equal(await rowCount(t, 'email_metrics'), 0);
      assert.equal(await t.ctx.writer.transaction((tx) => foldMetrics(tx, 3)), 3);
      assert.deepEqual(await metrics(question), before);
      assert.equal(await t.ctx.writer.transaction((tx) => foldMetrics(tx, 5000)), appended - 3);
      assert.equal(await rowCount(t, 'email_metric_deltas'), 0);
      assert.deepEqual(await metrics(question), before);
    });

    it('answers totals only by default, every metric, rates from the counts', async () => {
      const answer = await metrics({ startDate: '2031-02-27' });
      assert.equal(answer.data, undefined);
      assert.deepEqual(answer.dimensions, []);
      assert.equal(answer.granularity, 'daily');
      assert.equal(answer.start_date, '2031-02-27T00:00:00.000Z');
      assert.deepEqual(answer.totals, {
        ...sum(G1, G2, G3, G4),
        suppressed: 0, bounced_transient: 0, bounced_permanent: 1, bounced_undetermined: 0, delivery_delayed: 0,
        delivery_rate: 0.8, open_rate: 0.5, click_rate: 0.5, bounce_rate: 0.2, complaint_rate: 0.25, unsubscribe_rate: 0.25,
      });
      assert.deepEqual(Object.keys(answer.totals).slice(0, 3), ['received', 'delivered', 'complained']);
      // The default range is the six days before now's day and that day: nothing before Feb 25.
      assert.equal((await metrics({ timezone: 'UTC' })).start_date, '2031-02-25T00:00:00.000Z');
    });

    it('breaks down by domain (with its Mailroom id) and filters by domain_id', async () => {
      const answer = await metrics({ startDate: '2031-02-27', metrics: ['received', 'sent', 'delivered', 'opened', 'unique_opened', 'failed', 'open_rate'], dimensions: ['domain'] });
      assert.deepEqual(answer.data, [
        { domain_id: null, domain_name: 'acme.test', received: 0, sent: 3, delivered: 2, opened: 2, unique_opened: 1, failed: 0, open_rate: 0.5 },
        { domain_id: inboxDomainId, domain_name: 'inbox.test', received: 2, sent: 0, delivered: 0, opened: 0, unique_opened: 0, failed: 0, open_rate: 0 },
        { domain_id: shopDomainId, domain_name: 'shop.test', received: 0, sent: 2, delivered: 2, opened: 2, unique_opened: 1, failed: 2, open_rate: 0.5 },
      ]);
      const shop = await metrics({ startDate: '2031-02-27', metrics: ['sent', 'failed'], domainId: [shopDomainId] });
      assert.deepEqual(shop.totals, { sent: 2, failed: 2 });
    });

    it('breaks down by broadcast: these emails are in none', async () => {
      const answer = await metrics({ startDate: '2031-02-27', metrics: ['sent'], dimensions: ['broadcast'] });
      assert.deepEqual(answer.data, [{ broadcast_id: null, broadcast_name: null, sent: 5 }]);
      const none = await metrics({ startDate: '2031-02-27', metrics: ['sent'], broadcastId: ['0192f0c4-0000-7000-8000-000000000000'] });
      assert.deepEqual(none.totals, { sent: 0 });
    });

    it('reads the email dimension and email_id from the events, by the same rule', async () => {
      const keys = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'unique_opened', 'clicked', 'unique_clicked', 'unsubscribed', 'failed'] as const;
      const byEmail = await metrics({ startDate: '2031-02-27', metrics: [...keys], dimensions: ['email'] });
      const expected = new Map([
        [ids.A, { sent: 3, delivered: 2, bounced: 1, complained: 1, opened: 2, unique_opened: 1, clicked: 1, unique_clicked: 1, unsubscribed: 1, failed: 0 }],
        [ids.B, { sent: 2, delivered: 2, bounced: 0, complained: 0, opened: 2, unique_opened: 1, clicked: 1, unique_clicked: 1, unsubscribed: 0, failed: 0 }],
        [ids.C, { ...sum(), failed: 1 }],
        [ids.D, { ...sum(), failed: 1 }],
      ]);
      assert.equal(byEmail.data!.length, 4);
      for (const row of byEmail.data!) assert.deepEqual(pick(row, keys), pick(expected.get(row.email_id!)!, keys));
      // The same totals as the rollup's (received messages are no sent emails, and have no email_id).
      assert.deepEqual(byEmail.totals, pick(sum(G1, G2, G3, G4), keys));

      // Since Mar 2 UTC: B's second open is not its recipient's first, its click is.
      const late = await metrics({ startDate: '2031-03-02', metrics: ['opened', 'unique_opened', 'clicked', 'unique_clicked'], emailId: [ids.B], dimensions: ['email', 'period'] });
      assert.deepEqual(late.data, [
        { period: '2031-03-02T00:00:00+00:00', email_id: ids.B, opened: 0, unique_opened: 0, clicked: 0, unique_clicked: 0 },
        { period: '2031-03-03T00:00:00+00:00', email_id: ids.B, opened: 1, unique_opened: 0, clicked: 1, unique_clicked: 1 },
      ]);
      const onlyA = await metrics({ startDate: '2031-02-27', metrics: ['sent', 'opened', 'bounce_rate'], emailId: [ids.A] });
      assert.deepEqual(onlyA.totals, { sent: 3, opened: 2, bounce_rate: 0.3333 });
    });

    it('takes lists comma-separated, repeated, or both', async () => {
      const response = await t.fetch('/emails/metrics?start_date=2031-02-27&metrics=sent&metrics=delivered,failed&dimensions=');
      const body = (await response.json()) as { totals: Counts; metrics: string[] };
      assert.deepEqual(body.metrics, ['sent', 'delivered', 'failed']);
      assert.deepEqual(body.totals, { sent: 5, delivered: 4, failed: 2 });
    });

    it('refuses what it cannot answer with 422, saying why', async () => {
      const id = '0192f0c4-0000-7000-8000-000000000000';
      assert.match(await refused('metrics=sent,opens'), /`metrics`: "opens" is not one of/);
      assert.match(await refused('dimensions=day'), /`dimensions`: "day" is not one of/);
      assert.match(await refused('granularity=yearly'), /`granularity`/);
      assert.match(await refused('dimensions=email,broadcast'), /`email` and `broadcast` dimensions cannot be combined/);
      assert.match(await refused(`email_id=${id}&dimensions=broadcast`), /`email_id` cannot be combined/);
      assert.match(await refused(`email_id=${id}&broadcast_id=${id}`), /`email_id` cannot be combined/);
      assert.match(await refused(`broadcast_id=${id}&dimensions=email`), /`broadcast_id` cannot be combined with the `email` dimension/);
      assert.match(await refused(`domain_id=${Array.from({ length: 101 }, () => id).map((x, i) => x.slice(0, -3) + String(i).padStart(3, '0')).join(',')}`), /at most 100 ids/);
      assert.match(await refused('email_id=not-a-uuid'), /"not-a-uuid" is not a UUID/);
      assert.match(await refused('timezone=Mars/Olympus'), /`timezone`: "Mars\/Olympus" is not an IANA time zone/);
      assert.match(await refused('start_date=2031-02-30'), /`start_date`: "2031-02-30" is not an ISO 8601 date/);
      assert.match(await refused('start_date=2031-03-03&end_date=2031-03-01'), /must be on or before `end_date`/);
      assert.match(await refused('start_date=2029-01-01&granularity=hourly&dimensions=period'), /more than 10,000 hourly periods/);
      // Four emails times 2,928 hours is more than 10,000 rows.
      assert.match(await refused('start_date=2030-11-01&granularity=hourly&dimensions=email,period'), /filter by `email_id` or narrow the range/);
    });
  });
}
