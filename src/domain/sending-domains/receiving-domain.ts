import type { Context } from '../../context.ts';
import { isBounceLocalPart } from '../bounces/verp.ts';

/**
 * Whether mail to `domainName` (lower-case ASCII, as the SMTP server passes it) may be accepted: a
 * domain of that name has receiving enabled and, in relay and direct modes, the rule of sending holds
 * for receiving's own record: with MAILROOM_REQUIRE_VERIFIED_DOMAIN (default on in direct mode only)
 * the Receiving MX was found at the last check. Capture mode, a test bench, never waits for DNS:
 * tests send to it directly, with no MX published. Read through the domain cache, so an RCPT costs
 * no query while the domain's row is fresh.
 */
export async function mayReceive(ctx: Context, domainName: string): Promise<boolean> {
  const domain = await ctx.domains.find(domainName);
  if (domain?.receiving !== 'enabled') return false;
  if (ctx.config.deliveryMode === 'capture' || !ctx.config.requireVerifiedDomain) return true;
  return domain.record_statuses.receiving_mx === 'verified';
}

/**
 * Whether `address` is a VERP bounce address (bounces/verp.ts): `bounces+...` at MAILROOM_BOUNCE_DOMAIN
 * or at the return-path host of a domain that sends (`send.example.com`), whose records point its MX
 * here. Accepted whatever its token: one that does not verify is dropped after DATA, with a log line.
 */
export async function isBounceAddress(ctx: Context, address: string): Promise<boolean> {
  const at = address.lastIndexOf('@');
  if (at <= 0 || !isBounceLocalPart(address.slice(0, at))) return false;
  const host = address.slice(at + 1).toLowerCase();
  if (host === ctx.config.bounceDomain.toLowerCase()) return true;
  const dot = host.indexOf('.');
  const domain = dot > 0 ? await ctx.domains.find(host.slice(dot + 1)) : undefined;
  return domain?.sending === 'enabled' && domain.custom_return_path === host.slice(0, dot);
}
