import type { Context } from '../../context.ts';

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
