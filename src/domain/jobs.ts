import type { Context } from '../context.ts';
import { newId } from '../ids.ts';
import type { JobRow } from '../store/jobs.ts';

/** A new job for `task`, due at `runAt`, with the configured attempts; `key` names it for later changes. */
export function newJob(ctx: Context, task: string, key: string, payload: object, runAt: number = ctx.clock.now()): JobRow {
  return {
    id: newId(),
    task,
    key,
    payload: JSON.stringify(payload),
    run_at: runAt,
    attempts: 0,
    max_attempts: ctx.config.worker.maxAttempts,
    locked_by: null,
    locked_at: null,
    last_error: null,
    created_at: ctx.clock.now(),
  };
}
