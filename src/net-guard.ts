// Outbound connections to addresses a user gave (remote attachments, webhook endpoints) must not reach
// this machine or its private network unless the operator allows it: checked on the address actually
// connected to, so DNS answering differently a moment later cannot slip past.
import { lookup as dnsLookup } from 'node:dns';
import type { Resolver } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The IPv4 address an IPv6 one carries in its last 32 bits, for the two forms that stacks may route as
 * IPv4: mapped (`::ffff:7f00:1`) and IPv4-compatible (`::7f00:1`, deprecated, which ipaddr.js calls
 * unicast). `::` and `::1` keep their IPv6 meaning: unspecified and loopback.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const [high, low] = address.parts.slice(6) as [number, number];
  if (address.parts.slice(0, 6).some((part) => part !== 0) || (high === 0 && low <= 1)) return undefined;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Only public unicast addresses: never loopback, private, link-local, multicast or reserved ranges. */
export function isPublicAddress(ip: string): boolean {
  const address = ipaddr.parse(ip);
  const checked = address.kind() === 'ipv6' ? (embeddedIPv4(address as ipaddr.IPv6) ?? address) : address;
  return checked.range() === 'unicast';
}

/**
 * A DNS lookup that refuses private answers. The connection is made to the address checked here,
 * so a name that resolves differently a moment later (DNS rebinding) cannot slip past.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses;
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) {
        return callback(Object.assign(new Error('private address'), { code: 'EPRIVATE' }), '', 0);
      }
      if (options.all) return callback(null, usable, 0);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/** Whether `url`'s host is an IP literal outside the public ranges (connected to without a lookup). */
export function isPrivateLiteral(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/**
 * A lookup through `resolver` (DNS_SERVERS), refusing private answers unless `allowPrivate`: for hosts a
 * recipient domain's DNS names (its MTA-STS policy host, its TLS report endpoint), found as its MX hosts are.
 */
export function resolverLookup(resolver: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const found = isIP(hostname)
      ? Promise.resolve([{ address: hostname, family: isIP(hostname) }])
      : Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]).then(([v4, v6]) => [
          ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
          ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
        ]);
    void found.then((list) => {
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) return callback(Object.assign(new Error('private address'), { code: 'EPRIVATE' }), '', 0);
      if (options.all) return callback(null, usable, 0);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
