import type { Server } from 'node:http';
import type { Context } from '../context.ts';
import { listenHealthPort } from '../monitoring/health-port.ts';
import { ping } from '../store/db.ts';

/**
 * `GET /health` and `GET /metrics` on SMTP_HEALTH_PORT, for a process that runs the SMTP listeners
 * and no API: 200 while the database answers (every message is committed there before its 250), else
 * 503.
 */
export function listenSmtpHealth(ctx: Context, port: number, host: string): Promise<Server> {
  return listenHealthPort(ctx, port, host, () =>
    ping(ctx.db).then(
      () => ({ healthy: true, body: { status: 'ok' } }),
      (error: unknown) => {
        ctx.log.warn({ err: error }, 'SMTP health check: the database does not answer');
        return { healthy: false, body: { status: 'unavailable' } };
      },
    ),
  );
}
