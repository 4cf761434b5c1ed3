import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Context } from '../context.ts';
import { faultOf } from '../store/availability.ts';
import { claimJobs, nextDueAt, releaseJobs, releaseJobsNotRunning, type ClaimedJob } from '../store/jobs.ts';
import { deleteStaleWorkers, deleteWorker, saveHeartbeat } from '../store/workers.ts';
import { attemptEnds, attemptOf, isLast } from './attempt.ts';
import { backoffMs, type TaskDeclaration, type TaskName, type TaskResult, type Tasks } from './task.ts';

const CLAIM_BATCH = 32;

/** How often a worker renews its row in `workers`. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/**
 * A worker silent this long is taken for dead, and its jobs are taken over. Six missed beats: a busy
 * event loop or a slow database does not make a live worker look dead, while a crashed worker's mail
 * waits half a minute, not minutes.
 */
export const WORKER_STALE_MS = 30_000;

/**
 * How long stop() waits for the tasks it cut off to end: each ends at its next step (a send refused,
 * a lock no longer held), well within this. One that does not (hung) is left behind, and the context
 * closes under it.
 */
const CUT_OFF_GRACE_MS = 2_000;

/** While the database is away a worker claims this seldom: its return wakes the runner at once. */
const DOWN_RETRY_MS = 5_000;

/**
 * Claims due jobs in small batches and runs them concurrently up to the configured limit, each an
 * attempt of its task's declaration (attempt.ts ends the job with what the task answered). It looks for
 * work when jobs are committed in this process or, on PostgreSQL, in any (store/job-notices.ts), when a
 * task finishes, when the next job falls due, and otherwise every poll interval. A task that throws, or
 * whose writes throw, is retried with its backoff until its attempts run out. While it runs, the runner
 * renews its heartbeat row; the jobs of a worker whose heartbeat went stale are taken over by the next
 * claim anywhere.
 */
export class Runner {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Ends attempts, those that finish together in one transaction. */
  private readonly finish: ReturnType<typeof attemptEnds>;
  /** The jobs running, by the promise that settles when their task does. */
  private readonly inFlight = new Map<Promise<void>, ClaimedJob>();
  /** Jobs cut off and handed back by stop(): another worker's now, whatever their task does next. */
  private readonly handedBack = new WeakSet<ClaimedJob>();
  private running = false;
  /** The database came back: the next claim first beats and hands back what the outage stranded. */
  private recovering = false;
  private claiming = false;
  private claimAgain = false;
  /** The claim under way, or the last one: stop() waits for it. */
  private claimed: Promise<void> = Promise.resolve();
  private beatAt = -Infinity;
  private savedAt: number | undefined;
  private beating: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private unlisten: (() => void) | undefined;
  private unback: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly tasks: Tasks,
  ) {
    this.finish = attemptEnds(ctx, this.id);
  }

  /** The time its heartbeat row was last written (by ctx.clock); undefined before the first, and once stopped. */
  get heartbeatAt(): number | undefined {
    return this.savedAt;
  }

  /** Starts beating and claiming; a stopped runner may start again. */
  start(): void {
    this.running = true;
    this.beatAt = -Infinity; // the first claim writes the row before it takes any job
    this.unsubscribe = this.ctx.jobsAdded.subscribe(() => this.wake());
    this.unlisten = this.ctx.jobNotices.listen(() => this.wake());
    this.unback = this.ctx.availability.onBack(() => {
      this.recovering = true;
      this.wake();
    });
    this.heartbeat = setInterval(() => {
      // The database's outage is logged once, by ctx.availability.
      this.beat().catch((error) => {
        if (!faultOf(error)) this.ctx.log.error({ err: error }, 'heartbeat failed');
      });
    }, HEARTBEAT_INTERVAL_MS);
    this.wake();
  }

  /** Looks for due jobs now. */
  wake(): void {
    if (!this.running) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claimed = this.claim();
  }

  private async claim(): Promise<void> {
    this.claiming = true;
    const { concurrency, lockTimeoutMs, pollMs } = this.ctx.config.worker;
    let drained = false;
    let wait = pollMs;
    try {
      // Also renewed here, not only on its timer, for a clock that moves faster than the timer (tests),
      // and first after an outage, so that no other worker takes this one's jobs for a dead worker's.
      if (this.recovering || this.ctx.clock.now() - this.beatAt >= HEARTBEAT_INTERVAL_MS) await this.beat();
      if (this.recovering) await this.recover();
      do {
        this.claimAgain = false;
        const free = concurrency - this.inFlight.size;
        if (free <= 0) break; // a finishing task wakes the runner
        const limit = Math.min(free, CLAIM_BATCH);
        const now = this.ctx.clock.now();
        const jobs = await claimJobs(this.ctx.db, {
          workerId: this.id,
          now,
          limit,
          silentSince: now - WORKER_STALE_MS,
          lockedBefore: now - lockTimeoutMs,
        });
        if (!this.running) {
          // stop() came while this claim was in the database: hand its jobs back unstarted, now.
          await releaseJobs(this.ctx.db, this.id, jobs.map((job) => job.id));
          break;
        }
        for (const job of jobs) this.run(job);
        if (jobs.length === limit) this.claimAgain = true;
        else drained = true;
      } while (this.claimAgain && this.running);
      // A job due before the next poll (a scheduled email, a retry) is claimed when it falls due.
      if (drained && this.running) {
        const next = await nextDueAt(this.ctx.db, this.ctx.clock.now());
        if (next !== undefined) wait = Math.min(pollMs, Math.max(0, next - this.ctx.clock.now()));
      }
    } catch (error) {
      // The database away: logged once by ctx.availability, and its return wakes the runner.
      if (faultOf(error)) wait = Math.max(wait, DOWN_RETRY_MS);
      else this.ctx.log.error({ err: error }, 'claiming jobs failed');
    } finally {
      this.claiming = false;
    }
    clearTimeout(this.timer);
    // A wake that came while this claim was ending (the database back, a job committed) claims at once.
    if (this.running) this.timer = setTimeout(() => this.wake(), this.claimAgain ? 0 : wait);
  }

  /**
   * Hands back the jobs this worker holds and does not run: those whose end the outage kept from being
   * written, and those claimed by a statement whose answer it lost. Inside a claim, so that no claim of
   * its own runs meanwhile.
   */
  private async recover(): Promise<void> {
    const running = [...this.inFlight.values()].map((job) => job.id);
    const released = await releaseJobsNotRunning(this.ctx.db, this.id, running);
    this.recovering = false;
    if (released > 0) this.ctx.log.info({ jobs: released }, `${released} jobs held through the database's outage are due again`);
  }

  /** Renews this worker's heartbeat, and deletes the rows of workers that died. */
  private beat(): Promise<void> {
    const now = this.ctx.clock.now();
    this.beatAt = now;
    this.beating = (async () => {
      await saveHeartbeat(this.ctx.db, this.id, now, this.ctx.transport.paused() ?? null);
      if (this.running) this.savedAt = now;
      await deleteStaleWorkers(this.ctx.db, now - WORKER_STALE_MS);
    })();
    return this.beating;
  }

  private run(job: ClaimedJob): void {
    const done = this.execute(job).finally(() => {
      this.inFlight.delete(done);
      // Claim again once half the slots are free: fewer, larger claims than one per finished job.
      if (this.inFlight.size <= this.ctx.config.worker.concurrency / 2) this.wake();
    });
    this.inFlight.set(done, job);
  }

  private async execute(job: ClaimedJob): Promise<void> {
    // Its payload is its task's: enqueue takes only that (enqueue.ts).
    const declaration = (this.tasks as Record<string, TaskDeclaration<TaskName> | undefined>)[job.task];
    let result: TaskResult;
    try {
      result = declaration
        ? await declaration.run(this.ctx, attemptOf(this.ctx, declaration, job, this.id))
        : { ending: { end: 'fail', error: `no task named "${job.task}"` } };
    } catch (error) {
      if (this.givenUp(job, error)) return;
      if (!isLast(this.ctx, declaration!, job)) {
        const retryInMs = (declaration!.backoffMs ?? backoffMs)(job.attempts);
        const fields = { err: error, job: job.id, task: job.task, attempts: job.attempts, retry_in_ms: retryInMs };
        this.ctx.log.warn(fields, `job failed; retrying in ${Math.round(retryInMs / 1000)} s`);
      }
      result = { ending: { end: 'retry', error: String(error) } };
    }
    try {
      await this.finish(declaration, job, result);
    } catch (error) {
      // The database away: recover() hands the job back on its return. Else the lock goes stale and
      // another claim takes the job over.
      if (!this.givenUp(job, error)) this.ctx.log.error({ err: error, job: job.id }, 'could not end a job');
    }
  }

  /**
   * Whether an attempt's failure is none of the job's: handed back at stop (often the context closing
   * under it), or the database gone under it (the job stays held, and is due again once the database is
   * back: recover(); the outage is logged once).
   */
  private givenUp(job: ClaimedJob, error: unknown): boolean {
    if (this.handedBack.has(job)) return true;
    if (!faultOf(error)) return false;
    this.ctx.availability.failed(error);
    return true;
  }

  /**
   * Stops claiming (a claim under way hands its jobs back at once, unstarted) and waits up to
   * `timeoutMs` for running jobs. Then it cuts off the sends under way (Transport.abort: the receiving
   * server discards a message cut off before its end, and no send starts from then on), hands back
   * every job still running, their attempt not counted, and deletes its heartbeat row, so that other
   * workers take them over at once; one warning gives the counts. It returns once the cut-off tasks
   * have ended (or CUT_OFF_GRACE_MS later), so that the context closes after them; what they do
   * meanwhile is not reported. The transport is then done: one runner per context.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.running = false;
    this.savedAt = undefined;
    this.unsubscribe?.();
    this.unlisten?.();
    this.unback?.();
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    await this.claimed;
    await this.settled(timeoutMs);
    const cutOff = [...this.inFlight.values()];
    for (const job of cutOff) this.handedBack.add(job);
    const sends = cutOff.length > 0 ? this.ctx.transport.abort() + this.ctx.relays.abort() : 0;
    try {
      await releaseJobs(this.ctx.db, this.id, cutOff.map((job) => job.id));
      await this.beating.catch(() => {}); // a beat under way would bring the row back after its delete
      await deleteWorker(this.ctx.db, this.id);
    } catch (error) {
      // Its row goes stale instead, and its jobs are taken over within WORKER_STALE_MS.
      this.ctx.log.error({ err: error }, 'could not hand back the jobs of a stopping worker');
    }
    await this.settled(CUT_OFF_GRACE_MS);
    this.inFlight.clear(); // a task that outlived the grace is no longer this runner's
    if (cutOff.length > 0) {
      this.ctx.log.warn(
        { jobs: cutOff.length, sends },
        `shutdown timeout: ${cutOff.length} running jobs handed back to other workers, ${sends} of them sends cut off before their end`,
      );
    }
  }

  /** Resolves when every running task has ended, or after `timeoutMs`. */
  private async settled(timeoutMs: number): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.inFlight.keys()),
      new Promise((resolve) => (timeout = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timeout);
  }
}
