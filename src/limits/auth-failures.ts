import { clientKey } from './client-key.ts';

/** How long a failed authentication counts against its client address. */
export const AUTH_FAILURE_WINDOW_MS = 10 * 60_000;
/** Clients remembered at most; past it, those whose window has passed are forgotten. */
const MAX_ADDRESSES = 10_000;

/**
 * Failed authentications per client (SMTP AUTH, an API key, a dashboard sign-in), an IPv6 /64 counting
 * as one (clientKey): once `max` fail within 10 minutes (from the first), the client is refused until
 * that window ends, whatever the password or key (guessing keys costs a client its access, not our CPU).
 */
export function authFailures(max: number, now: () => number) {
  const failures = new Map<string, { count: number; since: number }>();
  const live = (key: string) => {
    const entry = failures.get(key);
    return entry && now() - entry.since < AUTH_FAILURE_WINDOW_MS ? entry : undefined;
  };
  /** Milliseconds until the address may try again; 0 when it may now. */
  const blockedFor = (address: string): number => {
    const entry = live(clientKey(address));
    return entry && entry.count >= max ? entry.since + AUTH_FAILURE_WINDOW_MS - now() : 0;
  };
  return {
    blockedFor,
    blocked: (address: string): boolean => blockedFor(address) > 0,
    add(address: string): void {
      const key = clientKey(address);
      const entry = live(key);
      if (entry) return void entry.count++;
      if (failures.size >= MAX_ADDRESSES) for (const [other] of failures) if (!live(other)) failures.delete(other);
      failures.set(key, { count: 1, since: now() });
    },
  };
}

export type AuthFailures = ReturnType<typeof authFailures>;
