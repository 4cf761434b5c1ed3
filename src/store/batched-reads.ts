import { isPostgres, type Db, type Tx } from './db.ts';

// Reads by key that arrive in the same turn of the event loop go to PostgreSQL as one statement: the
// deliveries a claim starts together read their emails, recipients and suppressions in one round trip
// each for the group, not one each.

/** Keys read in one statement at most. */
const MAX_KEYS = 5_000;

interface Caller<K, V> {
  keys: K[];
  resolve(found: Map<K, V>): void;
  reject(error: unknown): void;
}

/**
 * `load` (the rows of many keys, by key) made a read of some keys that waits for the turn's other
 * reads through the same pool and goes with them. In a transaction, or on SQLite, where a read is a
 * call and not a round trip, it reads at once.
 */
export function batchedRead<K, V>(load: (db: Db, keys: K[]) => Promise<Map<K, V>>): (db: Db | Tx, keys: K[]) => Promise<Map<K, V>> {
  const waiting = new WeakMap<Db, Caller<K, V>[]>();
  const run = async (db: Db, callers: Caller<K, V>[]) => {
    try {
      const keys = [...new Set(callers.flatMap((caller) => caller.keys))];
      const found = new Map<K, V>();
      for (let i = 0; i < keys.length; i += MAX_KEYS) for (const [key, value] of await load(db, keys.slice(i, i + MAX_KEYS))) found.set(key, value);
      for (const caller of callers) caller.resolve(new Map(caller.keys.flatMap((key) => (found.has(key) ? [[key, found.get(key)!] as const] : []))));
    } catch (error) {
      for (const caller of callers) caller.reject(error);
    }
  };
  return (db, keys) => {
    if (db.isTransaction || !isPostgres(db) || keys.length === 0) return load(db, keys);
    return new Promise((resolve, reject) => {
      let callers = waiting.get(db);
      if (!callers) {
        waiting.set(db, (callers = []));
        const taken = callers;
        setImmediate(() => {
          waiting.delete(db);
          void run(db, taken);
        });
      }
      callers.push({ keys, resolve, reject });
    });
  };
}
