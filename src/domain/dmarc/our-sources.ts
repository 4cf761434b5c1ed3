import { spf } from 'mailauth/lib/spf/index.js';
import type { DNSResolver } from 'mailauth';
import type { Context } from '../../context.ts';
import type { DomainRow } from '../../store/domains.ts';
import { createLookups, ipKey } from '../deliverability/lookups.ts';
import { senderOf, type Sender } from '../deliverability/sender.ts';
import { sendingAddresses } from '../deliverability/sending-addresses.ts';

// Which sources of a report are Mailroom's own: its sending addresses (MAILROOM_SENDING_IPS, else in
// direct mode those of MAILROOM_HOSTNAME), or through a relay whose SPF include Mailroom knows, the
// addresses that include authorizes (mailauth evaluates it as a receiver would).

/** Whether an address is one Mailroom's mail leaves from; each address asked once. */
export type IsOurs = (ip: string) => Promise<boolean>;

export function oursOf(sender: Sender, sending: string[]): IsOurs {
  const own = new Set(sending.map(ipKey));
  const include = sender.relay?.include;
  const host = sender.config.mailHostname;
  const name = sender.domain.name;
  // The relay's include alone, as if it were the domain's record.
  const resolver: DNSResolver = (asked, type) =>
    type === 'TXT' && asked.toLowerCase() === name ? Promise.resolve([[`v=spf1 include:${include} -all`]]) : (sender.lookups.raw(asked, type) as Promise<never>);
  const known = new Map<string, Promise<boolean>>();
  return (ip) => {
    const key = ipKey(ip);
    if (own.has(key) || include === undefined) return Promise.resolve(own.has(key));
    let answer = known.get(key);
    if (!answer) {
      answer = spf({ ip: key, sender: `postmaster@${name}`, helo: host, mta: host, resolver }).then((result) => result.status.result === 'pass', () => false);
      known.set(key, answer);
    }
    return answer;
  };
}

/** The test of a domain's sources now, with the lookups it needs (the sending addresses; the relay's include). */
export async function oursFor(ctx: Context, domain: DomainRow, now: number): Promise<IsOurs> {
  const sender = senderOf(domain, ctx.config, createLookups(ctx.dns), now);
  return oursOf(sender, (await sendingAddresses(sender)).sending);
}
