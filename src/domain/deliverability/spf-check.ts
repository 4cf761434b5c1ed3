import { isIPv6 } from 'node:net';
import { spf } from 'mailauth/lib/spf/index.js';
import type { DNSResolver } from 'mailauth';
import { checkOf, record, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import type { Sender } from './sender.ts';

// `spf`: one SPF record at the envelope domain that authorizes what sends (this host's addresses in
// direct mode, the relay's include in relay mode when it is known), within RFC 7208's 10 DNS lookups,
// without `+all`. mailauth evaluates the record as a receiver would, and counts its lookups.

const SPF = /^v=spf1(\s|$)/i;
const ALL = /^[+?~-]?all$/i;
/** Lookups beyond this are a permerror at receivers (RFC 7208, 4.6.4). */
export const SPF_LOOKUP_LIMIT = 10;
/** An address no record authorizes (TEST-NET-1): evaluating for it walks the whole record, counting every lookup. */
const NOBODY = '192.0.2.1';

/** mailauth's comment without the host it names first. */
const reason = (comment: string | undefined) => (comment ?? 'permerror').replace(/^[^:]*: /, '');

const termsOf = (rr: string) => rr.trim().split(/\s+/).slice(1);

/** The record with `added` mechanisms before its `all` or `redirect=` (or at its end), and `end` in place of its `all`. */
function edited(rr: string, added: string[], end?: string): string {
  const terms = termsOf(rr).filter((term) => !added.some((a) => a.toLowerCase() === term.toLowerCase()));
  const at = terms.findIndex((term) => ALL.test(term) || /^redirect=/i.test(term));
  const tail = at < 0 ? [] : terms.splice(at);
  const close = end ? [end, ...tail.filter((term) => !ALL.test(term))] : tail;
  return ['v=spf1', ...terms, ...added, ...close].join(' ');
}

/** One record of several: their mechanisms together, ending in `~all`. */
function merged(records: string[]): string {
  const terms = [...new Set(records.flatMap(termsOf).filter((term) => !ALL.test(term) && !/^redirect=/i.test(term)))];
  return ['v=spf1', ...terms, '~all'].join(' ');
}

/** The mechanism that authorizes an address: `a:<host>` when the host has it, else the address itself. */
const mechanismFor = (sender: Sender, ip: string, hostAddresses: string[]) =>
  hostAddresses.includes(ip) ? `a:${sender.config.mailHostname}` : `${isIPv6(ip) ? 'ip6' : 'ip4'}:${ip}`;

/** What a fresh record holds: the one GET /domains/:id lists, with the addresses it misses (direct), or the relay's include. */
function freshRecord(sender: Sender, needed: string[]): string {
  if (!sender.relay) return edited(sender.records.spf_txt.value, [...new Set(needed)]);
  return `v=spf1 include:${sender.relay.include ?? '<your provider’s SPF domain>'} ~all`;
}

export interface SpfOutcome {
  check: DeliverabilityCheck;
  /** What sends passes SPF: alignment counts on it. */
  authorized: boolean;
}

interface Authorization {
  findings: Finding[];
  authorized: boolean;
}

/** mailauth's evaluation of the record for `ip`, as a receiver makes it. */
const evaluate = (sender: Sender, ip: string, limits = {}) => {
  const host = sender.config.mailHostname;
  return spf({ ip, sender: `postmaster@${sender.envelope}`, helo: host, mta: host, resolver: sender.lookups.raw as DNSResolver, ...limits });
};

/** What the record's shape says: its lookups beyond the limit, its `all`, its `ptr`. */
function shapeFindings(sender: Sender, rr: string, lookups: number, needed: string[]): Finding[] {
  const { envelope } = sender;
  const terms = termsOf(rr);
  const all = terms.find((term) => ALL.test(term));
  const findings: Finding[] = [];
  if (lookups > SPF_LOOKUP_LIMIT) {
    findings.push({
      status: 'fail',
      detail: `The SPF record at ${envelope} needs ${lookups} DNS lookups; receivers stop at ${SPF_LOOKUP_LIMIT} and SPF fails (permerror).`,
      fix: `Remove the include: mechanisms you no longer use, or replace some by the ip4:/ip6: ranges they stand for, until it needs ${SPF_LOOKUP_LIMIT} or fewer.`,
    });
  }
  const ending = `End it with \`~all\`: ${record(envelope, 'TXT', edited(rr, [], '~all'))}.`;
  if (all !== undefined && /^\+?all$/i.test(all)) {
    const own = sender.relay ? [`include:${sender.relay.include ?? '<your provider’s SPF domain>'}`] : [...new Set(needed)];
    findings.push({ status: 'fail', detail: `The SPF record at ${envelope} ends in \`${all}\`, which authorizes every host on the Internet.`, fix: `Replace it with ${record(envelope, 'TXT', edited(rr, own, '~all'))}.` });
  } else if (all === undefined && !terms.some((term) => /^redirect=/i.test(term))) {
    findings.push({ status: 'warn', detail: `The SPF record at ${envelope} has no \`all\`: mail from hosts it does not name is neither refused nor marked.`, fix: ending });
  } else if (all?.startsWith('?')) {
    findings.push({ status: 'warn', detail: `The SPF record at ${envelope} ends in \`?all\` (neutral): mail from hosts it does not name is neither refused nor marked.`, fix: ending });
  }
  if (terms.some((term) => /^[+?~-]?ptr(:|$)/i.test(term))) {
    findings.push({ status: 'warn', detail: `The SPF record at ${envelope} uses \`ptr\`, which RFC 7208 asks senders not to use: receivers may skip it.`, fix: 'Replace `ptr` by the ip4:/ip6: or a: mechanisms it stands for.' });
  }
  return findings;
}

/** Relay mode: the record names the relay's include, when Mailroom knows it. */
function relayAuthorization(sender: Sender, rr: string): Authorization {
  const { include, host } = sender.relay!;
  if (include === undefined) return { findings: [{ status: 'pass', detail: `(Mailroom does not know which include ${host} needs: check that the record names your provider’s.)` }], authorized: true };
  if (termsOf(rr).some((term) => term.toLowerCase() === `include:${include}`)) return { findings: [], authorized: true };
  const fix = `Add \`include:${include}\`: ${record(sender.envelope, 'TXT', edited(rr, [`include:${include}`]))}.`;
  return { findings: [{ status: 'fail', detail: `The SPF record at ${sender.envelope} does not include ${include}, which ${host} sends from.`, fix }], authorized: false };
}

/** Direct mode: the record passes each sending address. */
async function addressAuthorization(sender: Sender, rr: string, lookups: number, sending: string[], hostAddresses: string[]): Promise<Authorization> {
  const { envelope, config } = sender;
  if (sending.length === 0) {
    const fix = `Publish an A record for ${config.mailHostname}, or set MAILROOM_SENDING_IPS.`;
    return { findings: [{ status: 'warn', detail: 'Mailroom knows no sending address to check the record for (see ptr).', fix }], authorized: false };
  }
  const results = await Promise.all(sending.map(async (ip) => ({ ip, status: (await evaluate(sender, ip)).status })));
  const refused = results.filter(({ status }) => ['fail', 'softfail', 'neutral', 'none'].includes(status.result));
  const broken = results.find(({ status }) => status.result === 'permerror');
  const findings: Finding[] = [];
  if (refused.length > 0) {
    const add = [...new Set(refused.map(({ ip }) => mechanismFor(sender, ip, hostAddresses)))];
    findings.push({
      status: 'fail',
      detail: `The SPF record at ${envelope} does not authorize ${refused.map(({ ip, status }) => `${ip} (${status.result})`).join(', ')}.`,
      fix: `Add ${add.map((m) => `\`${m}\``).join(' ')}: ${record(envelope, 'TXT', edited(rr, add))}.`,
    });
  }
  // Too many lookups is reported already; another permanent error is quoted as mailauth words it.
  if (broken && lookups <= SPF_LOOKUP_LIMIT) findings.push({ status: 'fail', detail: `SPF ends in an error for ${broken.ip}: ${reason(broken.status.comment)}.`, fix: `Correct the record at ${envelope}.` });
  if (results.some(({ status }) => status.result === 'temperror')) findings.push(unanswered(`the SPF record of ${envelope}`, { code: 'temperror' }));
  return { findings, authorized: results.every(({ status }) => status.result === 'pass') };
}

/** The spf check, for the sending addresses (direct mode) and the addresses MAILROOM_HOSTNAME has. */
export async function checkSpf(sender: Sender, sending: string[], hostAddresses: string[]): Promise<SpfOutcome> {
  const { envelope } = sender;
  const outcome = (findings: Finding[], authorized: boolean, extra: Partial<DeliverabilityCheck> = {}) => ({
    check: { ...checkOf('spf', findings, `The SPF record at ${envelope} authorizes what sends.`), ...extra },
    authorized,
  });
  let records: string[];
  try {
    records = (await sender.lookups.txt(envelope)).filter((text) => SPF.test(text.trim()));
  } catch (error) {
    return outcome([unanswered(envelope, error)], false);
  }
  const needed = sending.map((ip) => mechanismFor(sender, ip, hostAddresses));
  if (records.length === 0) {
    return outcome([{ status: 'fail', detail: `${envelope} has no SPF record.`, fix: `Publish ${record(envelope, 'TXT', freshRecord(sender, needed))}.` }], false);
  }
  if (records.length > 1) {
    const detail = `${envelope} has ${records.length} SPF records: receivers read that as an error (permerror), and SPF fails.`;
    return outcome([{ status: 'fail', detail, fix: `Merge them into one: ${record(envelope, 'TXT', merged(records))}.` }], false);
  }
  const rr = records[0]!.trim();
  const lookups = (await evaluate(sender, NOBODY, { maxResolveCount: 100, maxVoidCount: 100 })).lookups?.count ?? 0;
  const granted = sender.relay ? relayAuthorization(sender, rr) : await addressAuthorization(sender, rr, lookups, sending, hostAddresses);
  return outcome([...shapeFindings(sender, rr, lookups, needed), ...granted.findings], granted.authorized, { spf_lookups: lookups });
}
