import { checkOf, record, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import { ipKey, ptrName } from './lookups.ts';
import type { Sender } from './sender.ts';

// The addresses mail leaves from (MAILROOM_SENDING_IPS, else in direct mode those of MAILROOM_HOSTNAME),
// and `ptr` and `fcrdns`: each has a PTR, its name resolves back to it, and it is the name HELO says
// (MAILROOM_HOSTNAME). Receivers such as Gmail refuse mail from an address without both.

export interface SendingAddresses {
  /** The addresses checked; empty when none is known. */
  sending: string[];
  /** The addresses of MAILROOM_HOSTNAME, the HELO name. */
  host: string[];
  /** Why the host's addresses are unknown, when their lookup failed. */
  failure?: Finding;
}

export async function sendingAddresses(sender: Sender): Promise<SendingAddresses> {
  const { sendingIps, mailHostname } = sender.config;
  const given = sendingIps?.map(ipKey);
  try {
    const host = await sender.lookups.addresses(mailHostname);
    // Through a relay, this host's addresses send nothing.
    return { sending: given ?? (sender.relay ? [] : host), host };
  } catch (error) {
    return { sending: given ?? [], host: [], failure: unanswered(mailHostname, error) };
  }
}

/** The finding of direct mode without a known address, for each check of addresses. */
function noAddress(sender: Sender, addresses: SendingAddresses): Finding {
  const host = sender.config.mailHostname;
  return (
    addresses.failure ?? {
      status: 'fail',
      detail: `MAILROOM_HOSTNAME (${host}) has no A or AAAA record and MAILROOM_SENDING_IPS is not set: the sending addresses are unknown.`,
      fix: `Publish ${record(host, 'A', '<this server’s public address>')}, or set MAILROOM_SENDING_IPS.`,
    }
  );
}

const notApplicable = (id: string, sender: Sender) =>
  checkOf(id, [], `Relay mode: mail leaves from ${sender.relay!.host}'s addresses, whose reverse DNS the provider keeps.`);

/** Each sending address's PTR names, or the lookup's failure. */
type Names = Map<string, string[] | Finding>;

export async function reverseNames(sender: Sender, addresses: SendingAddresses): Promise<Names> {
  const entries = await Promise.all(
    addresses.sending.map(async (ip): Promise<[string, string[] | Finding]> => [ip, await sender.lookups.reverse(ip).catch((error: unknown) => unanswered(ptrName(ip), error))]),
  );
  return new Map(entries);
}

/** ptr: every sending address has a PTR, and it names MAILROOM_HOSTNAME. */
export function checkPtr(sender: Sender, addresses: SendingAddresses, names: Names): DeliverabilityCheck {
  if (sender.relay) return notApplicable('ptr', sender);
  if (addresses.sending.length === 0) return checkOf('ptr', [noAddress(sender, addresses)], '');
  const host = sender.config.mailHostname;
  const findings: Finding[] = [...names].map(([ip, got]) => {
    const ptr = record(ptrName(ip), 'PTR', host);
    if (!Array.isArray(got)) return got;
    if (got.length === 0) return { status: 'fail', detail: `${ip} has no PTR record: Gmail and others refuse mail from it.`, fix: `Ask whoever gives you ${ip} (your host, in its panel) to publish ${ptr}.` };
    if (!got.includes(host)) return { status: 'warn', detail: `The PTR of ${ip} names ${got.join(', ')}, not ${host}, the name HELO says.`, fix: `Have ${ptr} published, or set MAILROOM_HOSTNAME to ${got[0]} if that name resolves to ${ip}.` };
    return { status: 'pass', detail: `${ip} → ${host}.` };
  });
  return checkOf('ptr', findings, `Each sending address has a PTR naming ${host}:`);
}

/** fcrdns: the name each address's PTR gives resolves back to it, and so does MAILROOM_HOSTNAME. */
export async function checkFcrdns(sender: Sender, addresses: SendingAddresses, names: Names): Promise<DeliverabilityCheck> {
  if (sender.relay) return notApplicable('fcrdns', sender);
  if (addresses.sending.length === 0) return checkOf('fcrdns', [noAddress(sender, addresses)], '');
  const host = sender.config.mailHostname;
  const findings = await Promise.all(
    [...names].map(async ([ip, got]): Promise<Finding> => {
      if (!Array.isArray(got)) return got;
      if (got.length === 0) return { status: 'fail', detail: `${ip} has no PTR record, so no name confirms it (see ptr).`, fix: 'Fix the ptr check.' };
      let confirmed: string | undefined;
      try {
        for (const name of got) if (!confirmed && (await sender.lookups.addresses(name)).includes(ip)) confirmed = name;
      } catch (error) {
        return unanswered(got.join(', '), error);
      }
      if (!confirmed) return { status: 'fail', detail: `The PTR of ${ip} names ${got.join(', ')}, which does not resolve back to ${ip}.`, fix: `Publish ${record(got[0]!, ip.includes(':') ? 'AAAA' : 'A', ip)}.` };
      if (!addresses.host.includes(ip)) return addresses.failure ?? { status: 'warn', detail: `${ip} → ${confirmed} → ${ip}, but MAILROOM_HOSTNAME (${host}), the HELO name, does not resolve to ${ip}.`, fix: `Publish ${record(host, ip.includes(':') ? 'AAAA' : 'A', ip)}.` };
      return { status: 'pass', detail: `${ip} → ${confirmed} → ${ip}.` };
    }),
  );
  return checkOf('fcrdns', findings, 'Each sending address resolves to a name that resolves back to it:');
}
