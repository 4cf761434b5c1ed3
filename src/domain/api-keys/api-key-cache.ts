import { FreshCache } from '../../store/fresh-cache.ts';
import { findApiKeyByHash, type ApiKeyRow } from '../../store/api-keys.ts';
import type { Db } from '../../store/db.ts';

export interface ApiKeyCache {
  /** The key whose token hashes to `tokenHash`, read from the database at most a second ago. */
  find(tokenHash: string): Promise<ApiKeyRow | undefined>;
  /** A key deleted in this process stops working at once. */
  forget(keyId: string): void;
}

/**
 * Every request names its key, and looking it up cost a query per request. Keys found are kept for a
 * second: a key deleted through this process fails at once, one deleted through another process (several
 * API processes over PostgreSQL) within that second. Unknown tokens are never kept, so guessing cannot
 * fill the cache.
 */
export function createApiKeyCache(db: Db): ApiKeyCache {
  const known = new FreshCache<string, ApiKeyRow | undefined>(1000, 10_000);
  return {
    find: (tokenHash) => known.get(tokenHash, () => findApiKeyByHash(db, tokenHash), (key) => key !== undefined),
    forget: (keyId) => known.forget((key) => key?.id === keyId),
  };
}
