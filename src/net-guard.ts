// Outbound connections to addresses a user gave (remote attachments, webhook endpoints) must not reach
// this machine or its private network unless the operator allows it: checked on the address actually
// connected to, so DNS answering differently a moment later cannot slip past.
import { lookup as dnsLookup } from 'node:dns';
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
