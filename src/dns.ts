import { Resolver } from 'node:dns/promises';

// One resolver, built at start and shared by domain verification, deliverability checks and MX lookups,
// so DNS_SERVERS applies to all (tests point it at a DNS server they start); the reader thread of
// received mail builds its own on the same servers.

/** A node:dns resolver on DNS_SERVERS, or on the system's servers when unset. */
export function createResolver(servers: string[] | undefined): Resolver {
  const resolver = new Resolver({ timeout: 5000, tries: 2 });
  if (servers) resolver.setServers(servers);
  return resolver;
}

/** The name does not exist, or has no record of the asked type: an answer, not a failure to get one. */
export function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}

/** The TXT records at `name`, each with its strings joined (long values come split in 255-byte pieces). */
export async function lookupTxt(resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch (error) {
    if (isAbsent(error)) return [];
    throw error;
  }
}
