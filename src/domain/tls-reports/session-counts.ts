import type { Logger } from 'pino';
import type { Clock } from '../../time/clock.ts';
import type { TlsSession } from '../../delivery/tls-results.ts';
import { faultOf } from '../../store/availability.ts';
import { addTlsSessions, type TlsSessionCount } from '../../store/tls-reports.ts';
import type { Writer } from '../../store/writer.ts';

export interface TlsSessionCounts {
  record(session: TlsSession): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const FLUSH_EVERY_MS = 5_000;

/**
 * Counts TLS sessions for the daily reports without a write per delivery: added up in memory and
 * written together every few seconds and at shutdown (one upsert a key). A crash loses those seconds
 * of counts, which are statistics only. MAILROOM_TLSRPT=off counts nothing.
 */
export function createTlsSessionCounts(enabled: boolean, writer: Writer, clock: Clock, log: Logger): TlsSessionCounts {
  let pending = new Map<string, TlsSessionCount>();
  const flush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await writer.transaction((tx) => addTlsSessions(tx, [...batch.values()]));
    } catch (error) {
      // The database away: the counts wait for the next flush.
      if (faultOf(error)) for (const [key, row] of batch) add(key, row);
      throw error;
    }
  };
  const add = (key: string, row: TlsSessionCount) => {
    const known = pending.get(key);
    if (known) known.count = Number(known.count) + Number(row.count);
    else pending.set(key, row);
  };
  const timer = setInterval(() => {
    flush().catch((err) => {
      if (!faultOf(err)) log.warn({ err }, 'could not record TLS session counts');
    });
  }, FLUSH_EVERY_MS);
  timer.unref();
  return {
    record(session) {
      if (!enabled) return;
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      const row = { day, domain: session.domain, result: session.result, mx_host: session.mxHost, receiving_ip: session.receivingIp, count: 1, reason: session.reason };
      add([day, session.domain, session.result, session.mxHost, session.receivingIp].join('\n'), row);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush().catch((err) => log.warn({ err }, 'could not record TLS session counts'));
    },
  };
}
