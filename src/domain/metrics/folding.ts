import type { Context } from '../../context.ts';
import { faultOf } from '../../store/availability.ts';
import { foldMetrics } from '../../store/email-metrics.ts';

/** How often a worker folds the rollup's appended increments (store/email-metrics.ts). */
const FOLD_EVERY_MS = 2000;

/** Increments moved per transaction, so that a writer never waits long behind a fold. */
const FOLD_BATCH = 5000;

/**
 * Folds the increments the events' transactions appended into the metrics rollup, every 2 s, in every
 * worker process: folds at once in several take different rows, and a fold lost to a crash leaves its
 * increments appended, read all the same. Stop it before the context closes.
 */
export function startMetricsFolding(ctx: Context): { stop(): Promise<void> } {
  let folding: Promise<void> | undefined;
  const fold = async () => {
    for (let moved = FOLD_BATCH; moved === FOLD_BATCH; ) moved = await ctx.writer.transaction((tx) => foldMetrics(tx, FOLD_BATCH));
  };
  const timer = setInterval(() => {
    // One fold at a time: one that takes longer than the interval moves what came meanwhile too.
    folding ??= fold()
      .catch((error: unknown) => {
        // The database's outage is logged once, by ctx.availability.
        if (!faultOf(error)) ctx.log.warn({ err: error }, 'could not fold the metrics rollup; trying again in 2 s');
      })
      .finally(() => (folding = undefined));
  }, FOLD_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await folding;
    },
  };
}
