import { FreshCache } from '../../store/fresh-cache.ts';
import type { Db } from '../../store/db.ts';
import { findProject, type ProjectRow } from '../../store/projects.ts';

export interface ProjectCache {
  /** The project `id`, as the database had it at most a second ago; undefined when none. */
  find(id: string): Promise<ProjectRow | undefined>;
  /** A project changed in this process is read anew at once. */
  forget(id: string): void;
}

/**
 * Every request of a key reads its project's rate limit, and every send its quotas and relay: kept for a
 * second, as keys and domains are, so a change made through another process shows within that second.
 */
export function createProjectCache(db: Db): ProjectCache {
  const known = new FreshCache<string, ProjectRow | undefined>(1000, 10_000);
  return {
    find: (id) => known.get(id, () => findProject(db, id)),
    forget: (id) => known.forget((row) => row?.id === id),
  };
}
