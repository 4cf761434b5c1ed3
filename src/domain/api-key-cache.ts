import { performance } from 'node:perf_hooks';
import { findApiKeyByHash, type ApiKeyRow } from '../store/api-keys.ts';
import type { Db } from '../store/db.ts';

export interface ApiKeyCache {
  /** The key whose token hashes to `tokenHash`, read from the database at most a second ago. */
  find(tokenHash: string): Promise<ApiKeyRow | undefined>;
  /** A key deleted in this process stops working at once. */
  forget(keyId: string): void;
}

const FRESH_MS = 1000;
const MAX_ENTRIES = 10_000;

/**
 * Every request names its key, and looking it up cost a query per request. Keys found are kept for a
 * second: a key deleted through this process fails at once, one deleted through another process (several
 * API processes over PostgreSQL) within that second. Unknown tokens are never kept, so guessing cannot
 * fill the cache.
 */
export function createApiKeyCache(db: Db): ApiKeyCache {
  const known = new Map<string, { key: ApiKeyRow; until: number }>();
  return {
    async find(tokenHash) {
      const now = performance.now();
      const entry = known.get(tokenHash);
      if (entry && entry.until > now) return entry.key;
      const key = await findApiKeyByHash(db, tokenHash);
      if (!key) {
        known.delete(tokenHash);
        return undefined;
      }
      if (known.size >= MAX_ENTRIES) known.clear();
      known.set(tokenHash, { key, until: now + FRESH_MS });
      return key;
    },
    forget(keyId) {
      for (const [hash, entry] of known) if (entry.key.id === keyId) known.delete(hash);
    },
  };
}
