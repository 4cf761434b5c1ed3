import type { Resolver } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { isAbsent } from '../../dns.ts';

// The DNS answers of one check, asked once each through the one resolver (DNS_SERVERS): SPF, DMARC,
// the PTR and blocklist lookups ask for the same names several times. An absent name or record is an
// empty answer; any other failure is thrown, for the check to say it could not tell.

export interface Lookups {
  /** An answer as node:dns gives it (TXT: lists of strings), absent names thrown: mailauth's resolver. */
  raw(name: string, type: string): Promise<unknown>;
  /** TXT records, each with its strings joined. */
  txt(name: string): Promise<string[]>;
  mx(name: string): Promise<{ exchange: string; priority: number }[]>;
  /** A records: a blocklist's answer. */
  ipv4(name: string): Promise<string[]>;
  /** A and AAAA records, normalized (ipKey). */
  addresses(name: string): Promise<string[]>;
  /** The names an address's PTR records give, lower-cased, without the final dot. */
  reverse(ip: string): Promise<string[]>;
}

/** An address in one spelling, so that two spellings of an IPv6 address compare equal. */
export const ipKey = (ip: string): string => ipaddr.process(ip).toString();

/** A host name as compared: lower case, no final dot. */
export const hostKey = (name: string): string => name.replace(/\.$/, '').toLowerCase();

/** An address as a DNS name's labels, reversed: `5.113.0.203` for 203.0.113.5, nibbles for IPv6 (PTR and blocklist names). */
export function reversedLabels(ip: string): string {
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toByteArray().reverse().join('.');
  return address.toByteArray().flatMap((byte) => [byte >> 4, byte & 15]).map((nibble) => nibble.toString(16)).reverse().join('.');
}

/** The name an address's PTR records are at. */
export const ptrName = (ip: string): string => `${reversedLabels(ip)}.${ipaddr.process(ip).kind() === 'ipv4' ? 'in-addr' : 'ip6'}.arpa`;

const orEmpty = <T>(answer: Promise<T[]>): Promise<T[]> => answer.catch((error: Error) => (isAbsent(error) ? [] : Promise.reject(error)));

export function createLookups(resolver: Resolver): Lookups {
  const asked = new Map<string, Promise<unknown>>();
  const raw = (name: string, type: string) => {
    const key = `${type} ${name.toLowerCase()}`;
    let answer = asked.get(key);
    if (!answer) {
      answer = resolver.resolve(name, type);
      // Each caller handles the failure it gets; the stored promise must not count as unhandled.
      answer.catch(() => {});
      asked.set(key, answer);
    }
    return answer;
  };
  return {
    raw,
    txt: async (name) => (await orEmpty(raw(name, 'TXT') as Promise<string[][]>)).map((chunks) => chunks.join('')),
    mx: (name) => orEmpty(raw(name, 'MX') as Promise<{ exchange: string; priority: number }[]>),
    ipv4: (name) => orEmpty(raw(name, 'A') as Promise<string[]>),
    async addresses(name) {
      const [v4, v6] = await Promise.all([orEmpty(raw(name, 'A') as Promise<string[]>), orEmpty(raw(name, 'AAAA') as Promise<string[]>)]);
      return [...v4, ...v6].map(ipKey);
    },
    reverse: async (ip) => (await orEmpty(raw(ptrName(ip), 'PTR') as Promise<string[]>)).map(hostKey),
  };
}
