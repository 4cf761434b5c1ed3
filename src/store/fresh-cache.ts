import { performance } from 'node:perf_hooks';
import { faultOf } from './availability.ts';

/**
 * Values read from the database and trusted for `freshMs` afterwards, for rows read on every request
 * or send that change a few times in their life (API keys, sending domains). At most `maxEntries`
 * are kept: beyond, the cache starts over, so no stream of distinct keys can grow it. While the
 * database is away the last value read stands (nothing can change it meanwhile): a key still
 * authenticates, so its request gets the outage's 503 (or GET /metrics its answer), not a refusal.
 */
export class FreshCache<K, V> {
  readonly #entries = new Map<K, { value: V; until: number }>();

  constructor(
    private readonly freshMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The value of `key`, loaded by `load` unless a fresh one is kept; kept only if `keep` says so. */
  async get(key: K, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const now = performance.now();
    const entry = this.#entries.get(key);
    if (entry && entry.until > now) return entry.value;
    let value: V;
    try {
      value = await load();
    } catch (error) {
      if (entry && faultOf(error)) return entry.value;
      throw error;
    }
    if (!keep(value)) {
      this.#entries.delete(key);
      return value;
    }
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    this.#entries.set(key, { value, until: now + this.freshMs });
    return value;
  }

  /** Forgets the entries whose value `matches`, or every entry. */
  forget(matches: (value: V) => boolean = () => true): void {
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }
}
