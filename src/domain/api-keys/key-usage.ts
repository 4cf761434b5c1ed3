import type { Logger } from 'pino';
import { toTimestamp, type Clock } from '../../time/clock.ts';
import { touchApiKeys } from '../../store/api-keys.ts';
import { faultOf } from '../../store/availability.ts';
import type { Writer } from '../../store/writer.ts';

export interface KeyUsage {
  touch(keyId: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const FLUSH_EVERY_MS = 10_000;

/**
 * Keeps `last_used_at` without a write per request: uses are remembered in memory and written
 * together every few seconds and at shutdown. A crash loses at most that many seconds of a
 * timestamp that is informational only.
 */
export function createKeyUsage(writer: Writer, clock: Clock, log: Logger): KeyUsage {
  let pending = new Map<string, string>();
  const flush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await writer.transaction((tx) => touchApiKeys(tx, batch));
    } catch (error) {
      // The database away: the uses wait for the next flush, unless a later use of the key came meanwhile.
      if (faultOf(error)) for (const [keyId, at] of batch) if (!pending.has(keyId)) pending.set(keyId, at);
      throw error;
    }
  };
  // The database's outage is logged once, by ctx.availability.
  const timer = setInterval(() => {
    flush().catch((err) => {
      if (!faultOf(err)) log.warn({ err }, 'could not record API key use');
    });
  }, FLUSH_EVERY_MS);
  timer.unref();
  return {
    touch: (keyId) => void pending.set(keyId, toTimestamp(clock.now())),
    flush,
    // A stop while the database is away loses these timestamps, and only them.
    async close() {
      clearInterval(timer);
      await flush().catch((err) => log.warn({ err }, 'could not record API key use'));
    },
  };
}
