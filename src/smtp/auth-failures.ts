/** How long a failed AUTH attempt counts against its client address. */
const WINDOW_MS = 10 * 60_000;
/** Addresses remembered at most; past it, those whose window has passed are forgotten. */
const MAX_ADDRESSES = 10_000;

/**
 * Failed AUTH attempts per client address: once `max` fail within 10 minutes (from the first), the
 * address is refused until that window ends, whatever the password (guessing keys costs a client its
 * access, not our CPU).
 */
export function authFailures(max: number, now: () => number) {
  const failures = new Map<string, { count: number; since: number }>();
  const live = (address: string) => {
    const entry = failures.get(address);
    return entry && now() - entry.since < WINDOW_MS ? entry : undefined;
  };
  return {
    blocked: (address: string): boolean => (live(address)?.count ?? 0) >= max,
    add(address: string): void {
      const entry = live(address);
      if (entry) return void entry.count++;
      if (failures.size >= MAX_ADDRESSES) for (const [other] of failures) if (!live(other)) failures.delete(other);
      failures.set(address, { count: 1, since: now() });
    },
  };
}
