import type { Server } from 'node:http';
import type { Context } from '../context.ts';
import { listenHealthPort } from './health-port.ts';
import { databaseDown } from './health.ts';
import { WORKER_STALE_MS, type Runner } from '../jobs/runner.ts';

/**
 * A worker whose heartbeat is older than this is reported unhealthy: half the silence after which
 * other workers take its jobs over, so a supervisor hears of it first.
 */
export const HEALTHY_MS = WORKER_STALE_MS / 2;

/**
 * `GET /health` on a port of the worker's own (WORKER_HEALTH_PORT), for a supervisor to watch a
 * process that serves no API: 200 while its heartbeat row is fresh and the database works, 503 when
 * the heartbeat is stale or gone (stopping), or the database is down (named); `delivery: 'paused'`
 * and why, while its transport is paused as a whole; and its `GET /metrics`.
 */
export function listenWorkerHealth(ctx: Context, runner: Runner, port: number, host: string): Promise<Server> {
  return listenHealthPort(ctx, port, host, async () => {
    const down = await databaseDown(ctx);
    const age = runner.heartbeatAt === undefined ? null : ctx.clock.now() - runner.heartbeatAt;
    const healthy = !down && age !== null && age < HEALTHY_MS;
    const paused = ctx.transport.paused();
    const delivery = paused && { delivery: 'paused', delivery_message: paused };
    return { healthy, body: { status: healthy ? 'ok' : 'unavailable', worker: runner.id, heartbeat_age_ms: age, ...down, ...delivery } };
  });
}
