import { FreshCache } from '../../store/fresh-cache.ts';
import type { Db } from '../../store/db.ts';
import { findDomainByName, type DomainRow } from '../../store/domains.ts';

export interface DomainCache {
  /** The domain named `name`, as the database had it at most a second ago; undefined when none. */
  find(name: string): Promise<DomainRow | undefined>;
  /** Domains changed in this process are read anew at once. */
  clear(): void;
}

/**
 * Every send reads its sender's domain (the sending rules when accepted; DKIM key, return path and TLS
 * policy when delivered): a query per email for a row that changes a few times in its life. Found
 * domains, and the absence of one, are kept for a second; a change made through another process (a
 * verification by a worker) shows within that second.
 */
export function createDomainCache(db: Db): DomainCache {
  const known = new FreshCache<string, DomainRow | undefined>(1000, 10_000);
  return {
    find: (name) => known.get(name, () => findDomainByName(db, name)),
    clear: () => known.forget(),
  };
}
