import { FreshCache } from '../../store/fresh-cache.ts';
import { adminKeyExists, anyAdminKey } from '../../store/admin-keys.ts';
import type { Db } from '../../store/db.ts';

export interface AdminKeyCache {
  /** Whether an admin key's token hashes to `tokenHash`, as the database said at most a second ago. */
  has(tokenHash: string): Promise<boolean>;
  /** Whether there is any admin key, as the database said at most a second ago. */
  any(): Promise<boolean>;
}

/**
 * Admin keys (admin_keys) are made and deleted by `npm run keys`, another process: a change shows within
 * a second, as an API key deleted through another process does. Kept, as API keys are, so that GET
 * /metrics still answers its admin key while the database is away; unknown tokens are never kept.
 */
export function createAdminKeyCache(db: Db): AdminKeyCache {
  const known = new FreshCache<string, boolean>(1000, 1000);
  const anyKey = new FreshCache<'any', boolean>(1000, 1);
  return {
    has: (tokenHash) => known.get(tokenHash, () => adminKeyExists(db, tokenHash), (found) => found),
    any: () => anyKey.get('any', () => anyAdminKey(db)),
  };
}
