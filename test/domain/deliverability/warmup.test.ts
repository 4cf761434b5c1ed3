import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { warmupCurve, WARMUP_CEILING } from '../../../src/domain/sending-domains/warmup.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

// A domain's warm-up (issue 38, point 3) through a real relay (smtp-server) with the clock moved a UTC
// day at a time: each day the relay gets the curve's volume, taken by the oldest emails that wait, and the
// rest show `scheduled` with why and until when. start 1 over 30 days: 1, 1, 2, 3, 5 ... (12 in 5 days).

const WARMUP = { start: 1, days: 30 };
const EMAILS = 12;

/** Once every send-email job is done, or put back by a worker to run later. */
async function settled(t: TestApp): Promise<void> {
  await eventually(async () => {
    const jobs = await t.ctx.db.selectFrom('jobs').selectAll().where('task', '=', 'send-email').execute();
    return jobs.every((job) => job.locked_by === null && Number(job.run_at) > t.clock.now());
  });
}

function nextUtcDay(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}

describe('warmupCurve', () => {
  it('grows geometrically from start on day 0 to the ceiling on the last day, then has no limit', () => {
    const curve = warmupCurve({ start: 50, days: 30 });
    assert.equal(curve.length, 31);
    assert.deepEqual(curve[0], { day: 0, volume: 50 });
    assert.deepEqual(curve[29], { day: 29, volume: WARMUP_CEILING });
    assert.deepEqual(curve[30], { day: 30, volume: null });
    for (let d = 1; d < 30; d++) assert.ok(curve[d]!.volume! > curve[d - 1]!.volume!, `day ${d} grows`);
    assert.deepEqual(warmupCurve({ start: 1, days: 30 }).slice(0, 5).map((p) => p.volume), [1, 1, 2, 3, 5]);
    assert.deepEqual(warmupCurve({ start: 500_000, days: 2 }), [{ day: 0, volume: 500_000 }, { day: 1, volume: 500_000 }, { day: 2, volume: null }], 'never shrinks');
    assert.deepEqual(warmupCurve({ start: 7, days: 1 }), [{ day: 0, volume: 7 }, { day: 1, volume: null }]);
  });
});

for (const dialect of dialects) {
  describe(`a domain's warm-up (${dialect})`, () => {
    let relay: TestSmtpServer;
    let t: TestApp;
    let path: string;

    before(async () => {
      relay = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: relay.url } });
      path = `/domains/${(await t.resend.domains.create({ name: 'warm.test' })).data!.id}`;
    });
    after(async () => {
      await t.close();
      await relay.close();
    });

    it('refuses a warm-up that is not whole numbers, a start under 1 or days outside 1 to 365, naming the field', async () => {
      for (const [warmup, field] of [
        [{ start: 0, days: 30 }, 'warmup.start'],
        [{ start: 2.5, days: 30 }, 'warmup.start'],
        [{ start: 50, days: 0 }, 'warmup.days'],
        [{ start: 50, days: 366 }, 'warmup.days'],
        [{ start: 50, days: 1.5 }, 'warmup.days'],
      ] as const) {
        const { status, body } = await requestJson(t, 'PATCH', path, { warmup });
        assert.equal(status, 422, JSON.stringify(warmup));
        assert.equal(body.name, 'validation_error');
        assert.match(body.message, new RegExp(`^Invalid \`${field.replace('.', '\\.')}\` field: `));
      }
      assert.equal((await requestJson(t, 'PATCH', path, { warmup: { start: 50 } })).status, 422, 'days missing');
      assert.equal((await requestJson(t, 'GET', path)).body.warmup, null);
    });

    it("sends each UTC day the curve's volume, replacing daily_limit; the rest waits scheduled for the next day, oldest first", async () => {
      assert.equal((await requestJson(t, 'PATCH', path, { daily_limit: 100, warmup: WARMUP })).status, 200);
      const shown = (await requestJson(t, 'GET', path)).body.warmup;
      assert.deepEqual({ ...shown, started_at: undefined }, { ...WARMUP, started_at: undefined, today_limit: 1 });
      assert.equal(Date.parse(shown.started_at), t.clock.now(), "day 0 is today");

      const ids: string[] = [];
      for (let i = 0; i < EMAILS; i++) {
        const { data, error } = await t.resend.emails.send({ from: 'news@warm.test', to: `r${String(i).padStart(2, '0')}@one.test`, subject: 's', text: 't' });
        assert.equal(error, null);
        ids.push(data.id);
        // The first takes day 0's slot before the others arrive: from then on, those that wait go oldest first.
        if (i === 0) await eventually(() => relay.messages.length === 1);
      }
      const curve = warmupCurve(WARMUP);
      const received = () => relay.messages.map((m) => m.to.join(','));
      let expected = 0;
      for (let day = 0; expected < EMAILS; day++) {
        if (day > 0) t.advance(nextUtcDay(t.clock.now()) - t.clock.now());
        expected += curve[day]!.volume!;
        await eventually(() => relay.messages.length >= expected);
        await settled(t);
        assert.equal(relay.messages.length, expected, `day ${day}: ${curve[day]!.volume} sent`);
        assert.equal((await requestJson(t, 'GET', path)).body.warmup.today_limit, curve[day]!.volume);
        // Oldest first: each day's slots go to the oldest that wait (sent together, they arrive in any order).
        const today = received().slice(expected - curve[day]!.volume!).sort();
        assert.deepEqual(today, Array.from({ length: curve[day]!.volume! }, (_, i) => `r${String(expected - curve[day]!.volume! + i).padStart(2, '0')}@one.test`), `day ${day}`);
        if (expected === EMAILS) break;
        const { data: waiting } = await t.resend.emails.get(ids[expected]!);
        const until = new Date(nextUtcDay(t.clock.now())).toISOString();
        assert.equal(waiting!.last_event, 'scheduled');
        assert.equal(new Date(waiting!.scheduled_at!).toISOString(), until);
        assert.deepEqual({ ...(waiting as any).waiting, until: new Date((waiting as any).waiting.until).toISOString() }, { reason: 'warmup', until });
      }
      const { data: last } = await t.resend.emails.get(ids.at(-1)!);
      assert.equal(last!.last_event, 'delivered');
      assert.equal((last as any).waiting, undefined);
      const events = (await requestJson(t, 'GET', `/emails/${ids.at(-1)}/events`)).body.data.map((e: { type: string }) => e.type);
      assert.deepEqual(events, ['scheduled', 'sent', 'delivered'], 'scheduled once, though it waited four days');

      assert.equal((await requestJson(t, 'PATCH', path, { warmup: null })).status, 200);
      assert.equal((await requestJson(t, 'GET', path)).body.warmup, null);
      assert.equal((await requestJson(t, 'GET', path)).body.daily_limit, 100);
    });
  });
}
