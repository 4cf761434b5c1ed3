import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { invalidField, quoted } from '../../errors.ts';
import { isPublicAddress } from '../../net-guard.ts';

// A webhook's endpoint is checked when it is set, so that a mistake is a 422 now rather than failed
// deliveries later. Unless MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS is set, an endpoint on this machine or its
// private network is refused: any holder of a full-access key could otherwise make Mailroom post into
// that network. Delivery checks again on the address it connects to (net-guard.ts guardedLookup), since
// a name may resolve elsewhere later.

/** `raw` as an endpoint: an absolute http(s) URL, on a public address unless `allowPrivate`. */
export async function checkEndpointUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField('endpoint', `${quoted(raw)} is not an absolute URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('endpoint', 'must be an http or https URL.');
  if (allowPrivate) return raw;
  const allow = 'set MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS=true to allow them (development, or a private network you trust).';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host)) throw invalidField('endpoint', `loopback, private and link-local addresses are not accepted: ${allow}`);
    return raw;
  }
  // Every address the name has: one private answer among public ones is enough to refuse it, since
  // which one a connection gets is not ours to choose.
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    throw invalidField('endpoint', `the host ${quoted(host)} could not be resolved.`);
  }
  if (addresses.some((a) => !isPublicAddress(a.address))) {
    throw invalidField('endpoint', `the host ${quoted(host)} resolves to a loopback, private or link-local address; those are not accepted: ${allow}`);
  }
  return raw;
}
