// What the workers have left to do, read from the jobs table: for the tests that check that something
// did not happen, so that they wait for the workers to be done rather than for a fixed time.
import { eventually, type TestApp } from './harness.ts';

/**
 * Waits until no job is due (by the app's clock) and none is held. A job wrongly due by then has run,
 * and done what it would have done.
 */
export async function nothingLeftToDo(t: TestApp): Promise<void> {
  await eventually(async () => {
    const left = await t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where((w) => w.or([w('locked_by', 'is not', null), w('run_at', '<=', t.clock.now())]))
      .limit(1)
      .execute();
    return left.length === 0;
  });
}
