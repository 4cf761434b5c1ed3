import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createThrottle, type Throttle } from '../../src/delivery/throttle.ts';
import { RETENTION_STEPS } from '../../src/domain/retention/retention.ts';
import { openDb, type Db } from '../../src/store/db.ts';
import { sharedWindows } from '../../src/store/rate-limit-windows.ts';
import { sharedSlowdowns } from '../../src/store/throttle-slowdowns.ts';
import { dialects, eventually, rowCount, startApp, type TestApp } from '../support/harness.ts';

// The throttles of two worker processes on one PostgreSQL database, each with its own pool, as two
// machines would run them: what one takes of a destination's rate, the other cannot take too.

const DESTINATION = 'mx.slow.test';
const { signal } = new AbortController();

/** How many of `count` messages to the destination go now, asked of the throttles in turn. */
async function admitted(throttles: Throttle[], count: number): Promise<number> {
  const asks = Array.from({ length: count }, (_, i) => throttles[i % throttles.length]!.admit(DESTINATION, signal));
  return (await Promise.all(asks)).filter((until) => until === undefined).length;
}

if (dialects.includes('postgres')) {
  describe('throttles of worker processes on PostgreSQL', () => {
    let t: TestApp;
    let otherDb: Db;
    let first: Throttle;
    let second: Throttle;

    before(async () => {
      t = await startApp('postgres', { worker: false });
      otherDb = openDb(t.ctx.config.databaseUrl);
      const throttleOn = (db: Db) =>
        createThrottle([{ name: DESTINATION, perSecond: 4 }], t.clock, {
          windows: sharedWindows(db, 'throttle_windows'),
          slowdowns: sharedSlowdowns(db),
          log: pino({ level: 'silent' }),
        })!;
      [first, second] = [throttleOn(t.ctx.db), throttleOn(otherDb)];
      t.advance(1000 - (t.clock.now() % 1000)); // the start of a window: no wait for the next one
    });
    after(async () => {
      await otherDb.destroy();
      await t.close();
    });

    it("share a destination's rate: 4 a second between them, not 4 each", async () => {
      assert.equal(await admitted([first, second], 10), 4);
      assert.equal(await admitted([second], 3), 0, 'the window is spent for both');
      t.advance(1000);
      assert.equal(await admitted([second, first], 10), 4);
    });

    it('share a slow-down: the other process halves its rate too, within seconds', async () => {
      t.advance(1000);
      first.slowDown(DESTINATION);
      await eventually(async () => (await rowCount(t, 'throttle_slowdowns')) === 1);
      // The second reads the others' slow-downs every 5 s; in the window after that, half the rate.
      t.advance(6000);
      assert.equal(await admitted([second], 4), 2);
      t.advance(1000);
      assert.equal(await admitted([first, second], 6), 2);
    });

    it("are forgotten by retention's run a day after their last use", async () => {
      const rows = async () => [await rowCount(t, 'throttle_windows'), await rowCount(t, 'throttle_slowdowns')];
      assert.deepEqual(await rows(), [1, 1]);
      const removed = () => t.ctx.writer.transaction((tx) => RETENTION_STEPS.rate_windows!(t.ctx, tx, t.clock.now()));
      assert.deepEqual(await removed(), { removed: 0, more: false });
      t.advance(86_400_000 + 1000);
      assert.deepEqual(await removed(), { removed: 2, more: false });
      assert.deepEqual(await rows(), [0, 0]);
    });
  });
}
