// Outbound connections to addresses a user gave (remote attachments, webhook endpoints) must not reach
// this machine or its private network unless the operator allows it: checked on the address actually
// connected to, so DNS answering differently a moment later cannot slip past.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Only public unicast addresses: never loopback, private, link-local, multicast or reserved ranges. */
export function isPublicAddress(ip: string): boolean {
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  return address.range() === 'unicast';
}

/**
 * A DNS lookup that refuses private answers. The connection is made to the address checked here,
 * so a name that resolves differently a moment later (DNS rebinding) cannot slip past.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) {
        return callback(Object.assign(new Error('private address'), { code: 'EPRIVATE' }), '', 0);
      }
      if (options.all) return callback(null, usable as never, 0);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/** Whether `url`'s host is an IP literal outside the public ranges (connected to without a lookup). */
export function isPrivateLiteral(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && !isPublicAddress(host);
}
