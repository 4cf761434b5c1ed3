import type { Server } from 'node:http';
import type { Context } from '../context.ts';
import { listenHealthPort } from '../monitoring/health-port.ts';
import { databaseDown } from '../monitoring/health.ts';

/**
 * `GET /health` and `GET /metrics` on SMTP_HEALTH_PORT, for a process that runs the SMTP listeners
 * and no API: 200 while the database works (every message is committed there before its 250), else
 * 503 naming it.
 */
export function listenSmtpHealth(ctx: Context, port: number, host: string): Promise<Server> {
  return listenHealthPort(ctx, port, host, async () => {
    const down = await databaseDown(ctx);
    return down ? { healthy: false, body: { status: 'unavailable', ...down } } : { healthy: true, body: { status: 'ok' } };
  });
}
