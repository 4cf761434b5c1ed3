import type { Db, Tx } from '../../store/db.ts';
import { findEnabledWebhooks, type WebhookRow } from '../../store/webhooks.ts';
import { FreshCache } from '../../store/fresh-cache.ts';

export interface WebhookCache {
  /**
   * The enabled endpoints, as the database had them at most a second ago; read through `db` when
   * needed (inside a transaction, its own: on SQLite another connection's read would wait for it).
   */
  enabled(db?: Db | Tx): Promise<WebhookRow[]>;
  /** Endpoints changed in this process are read anew at once. */
  clear(): void;
}

/**
 * Every recorded event asks which endpoints subscribe to it, and every delivery reads its endpoint: a
 * query each for a table that changes a few times in its life. Kept for a second; a change made
 * through another process shows within that second.
 */
export function createWebhookCache(db: Db): WebhookCache {
  const known = new FreshCache<'enabled', WebhookRow[]>(1000, 1);
  return {
    enabled: (through = db) => known.get('enabled', () => findEnabledWebhooks(through)),
    clear: () => known.forget(),
  };
}
