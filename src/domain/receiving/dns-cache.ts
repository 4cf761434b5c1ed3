import type { Resolver } from 'node:dns/promises';
import { isAbsent } from '../../dns.ts';

/** How long an answer is reused: a mail server asks about the same senders over and over. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export type Resolve = (name: string, type: string) => Promise<unknown>;

/**
 * mailauth's lookups through `resolver`, each answer (an absent name included, not a failure) reused
 * for a minute, as a caching resolver in front of a mail server would. Lookups under way are shared.
 */
export function cachedResolve(resolver: Resolver, now = Date.now): Resolve {
  const answers = new Map<string, { expires: number; answer: Promise<unknown> }>();
  return (name, type) => {
    const key = `${type} ${name.toLowerCase()}`;
    const cached = answers.get(key);
    if (cached && cached.expires > now()) return cached.answer;
    if (answers.size >= MAX_ENTRIES) answers.clear();
    const answer = resolver.resolve(name, type);
    answers.set(key, { expires: now() + TTL_MS, answer });
    // A failure to get an answer is not kept; an answer that the name is absent is.
    answer.catch((error) => {
      if (!isAbsent(error)) answers.delete(key);
    });
    return answer;
  };
}
