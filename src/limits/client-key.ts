import ipaddr from 'ipaddr.js';

// Limits per client (failed authentications, connections at once, the public request rate) count a
// client under one key: an IPv6 host is commonly given a whole /64, and counting each of its
// addresses apart would give it 2^64 budgets.

/** The key a client address counts under: IPv4 (and IPv4-mapped IPv6) as the IPv4 address, other IPv6 as its /64. */
export function clientKey(address: string): string {
  if (!address.includes(':') || !ipaddr.IPv6.isValid(address)) return address;
  const ip = ipaddr.IPv6.parse(address);
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...ip.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
