import ipaddr from 'ipaddr.js';
import { checkOf, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import { reversedLabels } from './lookups.ts';
import type { Sender } from './sender.ts';
import type { SendingAddresses } from './sending-addresses.ts';

// `blocklists`: each sending address asked of each DNS blocklist (MAILROOM_DNSBL_ZONES). A listed
// address has an A record at `<reversed address>.<zone>`, 127.0.0.x, whose code says why (and often
// a TXT record beside it); 127.255.255.x is a zone refusing to answer, not a listing.

interface Zone {
  /** Where a listed address is looked up and its removal asked for. */
  site: string;
  codes: Record<string, string>;
}

const SPAMHAUS: Zone = {
  site: 'https://check.spamhaus.org/',
  codes: {
    '127.0.0.2': 'SBL: a known source of spam',
    '127.0.0.3': 'SBL CSS: part of a snowshoe spam operation',
    '127.0.0.4': 'XBL: a host that is infected or exploited',
    '127.0.0.5': 'XBL: a host that is infected or exploited',
    '127.0.0.6': 'XBL: a host that is infected or exploited',
    '127.0.0.7': 'XBL: a host that is infected or exploited',
    '127.0.0.9': 'DROP: a hijacked or criminal network',
    '127.0.0.10': 'PBL: its ISP says this address should not send mail to the Internet directly',
    '127.0.0.11': 'PBL: Spamhaus says this address should not send mail to the Internet directly',
    '127.255.255.252': 'refused: the query was malformed',
    '127.255.255.254': 'refused: it answers no public or open resolver',
    '127.255.255.255': 'refused: this resolver asked too often',
  },
};

/** What the well-known zones' answers mean; any other zone's 127.0.0.x is "listed", its 127.255.255.x "refused". */
const ZONES: Record<string, Zone> = {
  'zen.spamhaus.org': SPAMHAUS,
  'sbl.spamhaus.org': SPAMHAUS,
  'xbl.spamhaus.org': SPAMHAUS,
  'pbl.spamhaus.org': SPAMHAUS,
  'bl.spamcop.net': { site: 'https://www.spamcop.net/bl.shtml', codes: { '127.0.0.2': 'reported as a source of spam by SpamCop users' } },
  'psbl.surriel.com': { site: 'https://psbl.org/', codes: { '127.0.0.2': 'it sent mail to PSBL’s spam traps' } },
  'b.barracudacentral.org': { site: 'https://www.barracudacentral.org/lookups', codes: { '127.0.0.2': 'poor reputation at Barracuda' } },
};

const meaning = (zone: string, code: string) => ZONES[zone]?.codes[code] ?? (code.startsWith('127.255.255.') ? 'refused' : 'listed');

/** What one zone says of one address: nothing, a listing, a refusal or an answer no zone gives. */
async function ask(sender: Sender, ip: string, zone: string): Promise<Finding | undefined> {
  const name = `${reversedLabels(ip)}.${zone}`;
  let codes: string[];
  try {
    codes = await sender.lookups.ipv4(name);
  } catch (error) {
    return unanswered(name, error);
  }
  if (codes.length === 0) return undefined;
  const explained = codes.map((code) => `${code}: ${meaning(zone, code)}`).join('; ');
  if (codes.some((code) => !ipaddr.process(code).match(ipaddr.parse('127.0.0.0'), 8))) {
    return { status: 'warn', detail: `${zone} answered ${codes.join(', ')} for ${ip}, which no blocklist answers: a resolver may be rewriting answers.`, fix: 'Point DNS_SERVERS at a resolver that does not rewrite answers.' };
  }
  if (codes.every((code) => code.startsWith('127.255.255.'))) {
    return { status: 'warn', detail: `${zone} did not answer for ${ip} (${explained}).`, fix: `Ask ${zone} through a resolver of your own (DNS_SERVERS), or remove it from MAILROOM_DNSBL_ZONES.` };
  }
  const reason = await sender.lookups.txt(name).then((texts) => (texts.length > 0 ? ` It says: "${texts.join(' ').slice(0, 300)}".` : ''), () => '');
  const site = ZONES[zone]?.site ?? `${zone}'s site`;
  return { status: 'fail', detail: `${ip} is listed on ${zone} (${explained}).${reason}`, fix: `Look ${ip} up at ${site}, remove the cause it names, then ask for its removal there.` };
}

export async function checkBlocklists(sender: Sender, addresses: SendingAddresses): Promise<DeliverabilityCheck> {
  const zones = sender.config.dnsblZones;
  if (zones.length === 0) return checkOf('blocklists', [], 'No blocklist is asked (MAILROOM_DNSBL_ZONES=none).');
  if (addresses.sending.length === 0) {
    const why = sender.relay ? `Relay mode: mail leaves from ${sender.relay.host}'s addresses (set MAILROOM_SENDING_IPS to have them looked up).` : 'No sending address is known (see ptr).';
    return checkOf('blocklists', sender.relay ? [] : [{ status: 'warn', detail: why, fix: 'Fix the ptr check.' }], why);
  }
  const answers = await Promise.all(addresses.sending.flatMap((ip) => zones.map((zone) => ask(sender, ip, zone))));
  const findings = answers.filter((finding): finding is Finding => finding !== undefined);
  return checkOf('blocklists', findings, `${addresses.sending.join(', ')} ${addresses.sending.length === 1 ? 'is' : 'are'} on none of ${zones.join(', ')}.`);
}
