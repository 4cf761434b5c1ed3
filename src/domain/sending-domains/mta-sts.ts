import { createHash } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { asciiDomain } from '../recipients/addresses.ts';

// MTA-STS (RFC 8461) for the domains that receive here: senders that honour it deliver to them over
// TLS only, to this host. The policy is served at https://mta-sts.<domain>/.well-known/mta-sts.txt
// (the Host header names the domain); its id, in the `_mta-sts` TXT record, changes with its text.

/** A week: senders keep the policy this long, and look for a new id before using it again. */
export const MTA_STS_MAX_AGE = 604_800;

export type PolicyHosts = Pick<Config, 'mailHostname' | 'smtpTls'>;

/**
 * The policy: `enforce` once the SMTP server presents a certificate of your own (SMTP_TLS_CERT);
 * `testing` with the self-signed one, which senders that check would refuse, so that they only report.
 */
export function mtaStsPolicy(hosts: PolicyHosts): string {
  const mode = hosts.smtpTls ? 'enforce' : 'testing';
  return `version: STSv1\r\nmode: ${mode}\r\nmx: ${hosts.mailHostname}\r\nmax_age: ${MTA_STS_MAX_AGE}\r\n`;
}

/** The policy's id (1 to 32 letters and digits): a hash of its text, so a changed policy has a new one. */
export const mtaStsPolicyId = (hosts: PolicyHosts): string => createHash('sha256').update(mtaStsPolicy(hosts)).digest('hex').slice(0, 20);

/** GET /.well-known/mta-sts.txt as `mta-sts.<domain>`: the policy of a domain that receives here, else 404. */
export async function servedPolicy(ctx: Context, host: string): Promise<string> {
  const name = host.toLowerCase().startsWith('mta-sts.') ? asciiDomain(host.slice('mta-sts.'.length).replace(/\.$/, '')) : undefined;
  const domain = name && (await ctx.domains.find(name));
  if (!domain || domain.receiving !== 'enabled') throw notFound('MTA-STS policy');
  return mtaStsPolicy(ctx.config);
}
