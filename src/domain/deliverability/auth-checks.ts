import { dmarc } from 'mailauth/lib/dmarc/index.js';
import type { DMARCResult, DNSResolver } from 'mailauth';
import { dkimPublicKey } from '../sending-domains/domain-verification.ts';
import { checkOf, record, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import type { Sender } from './sender.ts';
import { tagsOf, withTags } from './tag-list.ts';

// `dkim`, `dmarc` and `alignment`: the domain's key as published, its DMARC policy (mailauth finds it,
// at the domain or its organizational domain, as receivers do), and whether DMARC can pass.

const DMARC = /^v=DMARC1\s*(;|$)/i;

/** dkim: the record at `<selector>._domainkey.<domain>` holds the domain's key, not in test mode. */
export async function checkDkim(sender: Sender): Promise<DeliverabilityCheck> {
  const { fqdn, value } = sender.records.dkim;
  const publish = record(fqdn, 'TXT', value);
  let texts: string[];
  try {
    texts = await sender.lookups.txt(fqdn);
  } catch (error) {
    return checkOf('dkim', [unanswered(fqdn, error)], '');
  }
  const keys = texts.filter((text) => dkimPublicKey(text) !== undefined);
  const ours = keys.find((text) => dkimPublicKey(text) === dkimPublicKey(value));
  const findings: Finding[] = [];
  if (keys.length === 0) findings.push({ status: 'fail', detail: `${fqdn} has no DKIM key: receivers cannot verify the signature on the domain's mail.`, fix: `Publish ${publish}.` });
  else if (!ours) {
    const revoked = keys.every((text) => dkimPublicKey(text) === '');
    const detail = revoked ? `The key at ${fqdn} is revoked (an empty \`p=\`).` : `The key at ${fqdn} is not the domain's: signatures do not verify.`;
    findings.push({ status: 'fail', detail, fix: `Replace it with ${publish}.` });
  } else {
    if (tagsOf(ours).get('t')?.split(':').some((flag) => flag.trim() === 'y')) {
      findings.push({ status: 'warn', detail: `The key at ${fqdn} has \`t=y\` (testing): receivers may treat signed mail as unsigned.`, fix: `Remove \`t=y\`: ${publish}.` });
    }
    if (keys.length > 1) findings.push({ status: 'warn', detail: `${fqdn} has ${keys.length} key records: receivers may read another one.`, fix: `Keep only ${publish}.` });
  }
  return checkOf('dkim', findings, `${fqdn} holds the domain's key.`);
}

export interface DmarcOutcome {
  check: DeliverabilityCheck;
  /** The policy's tags; undefined without a record. */
  tags: Map<string, string> | undefined;
  /** The return path aligns with From, relaxed (organizational domains), as mailauth judges it. */
  relaxedSpf: boolean;
}

/** dmarc: a record (`warn` for `p=none`, and without `rua`), read as receivers read it. */
export async function checkDmarc(sender: Sender): Promise<DmarcOutcome> {
  const { name } = sender.domain;
  const at = `_dmarc.${name}`;
  const reports = `mailto:${sender.domain.dmarc_report_address ?? `dmarc@${name}`}`;
  const resolver = sender.lookups.raw as DNSResolver;
  const judge = (using: DNSResolver) => dmarc({ headerFrom: name, spfDomains: [sender.envelope], dkimDomains: [{ domain: name }], resolver: using }) as Promise<DMARCResult>;
  let own: string[];
  let result: DMARCResult;
  try {
    own = (await sender.lookups.txt(at)).filter((text) => DMARC.test(text.trim()));
    result = await judge(resolver);
    if (result.status.result === 'temperror') throw Object.assign(new Error(result.error), { code: 'temperror' });
  } catch (error) {
    return { check: checkOf('dmarc', [unanswered(at, error)], ''), tags: undefined, relaxedSpf: false };
  }
  if (own.length > 1) {
    const fix = `Keep one: ${record(at, 'TXT', own[0]!.trim())}.`;
    return { check: checkOf('dmarc', [{ status: 'fail', detail: `${at} has ${own.length} DMARC records: receivers apply none of them.`, fix }], ''), tags: undefined, relaxedSpf: false };
  }
  if (result.status.result === 'none') {
    // With no policy, alignment is judged as under the default record (relaxed).
    const assumed: DNSResolver = (asked, type) => (type === 'TXT' && asked.toLowerCase() === at ? Promise.resolve([['v=DMARC1; p=none']]) : resolver(asked, type));
    const relaxedSpf = Boolean((await judge(assumed).catch(() => undefined))?.alignment?.spf.result);
    const fix = `Publish ${record(at, 'TXT', withTags(sender.records.dmarc.value, { rua: reports }))} (rua: an address of yours that reads the reports).`;
    return { check: checkOf('dmarc', [{ status: 'fail', detail: `${name} has no DMARC record: Gmail and Yahoo refuse bulk mail without one.`, fix }], ''), tags: undefined, relaxedSpf };
  }
  const rr = result.rr ?? '';
  const where = own.length === 1 ? at : `_dmarc.${result.domain}`;
  const tags = tagsOf(rr);
  const policy = (result.policy ?? '').toLowerCase();
  const findings: Finding[] = [];
  if (!['none', 'quarantine', 'reject'].includes(policy)) {
    findings.push({ status: 'fail', detail: `The DMARC record at ${where} has no valid policy (\`p=${policy}\`).`, fix: `Publish ${record(where, 'TXT', withTags(rr, { p: 'none' }))}.` });
  } else if (policy === 'none') {
    const raised = withTags(rr, { p: 'quarantine', ...(tags.has('rua') ? {} : { rua: reports }) });
    const fix = `When its reports show your mail passing, raise the policy: ${record(where, 'TXT', raised)}.`;
    findings.push({ status: 'warn', detail: `The DMARC policy at ${where} is \`p=none\`: mail that fails DMARC is still delivered, so anyone may send as ${name}.`, fix });
  }
  if (!tags.has('rua')) {
    findings.push({ status: 'warn', detail: `The DMARC record at ${where} has no \`rua\`: nobody receives its aggregate reports.`, fix: `Add \`rua=${reports}\` (an address of yours): ${record(where, 'TXT', withTags(rr, { rua: reports }))}.` });
  }
  const passed = `The DMARC record at ${where} has \`p=${policy}\` and sends its reports to ${tags.get('rua')}.`;
  return { check: checkOf('dmarc', findings, passed), tags, relaxedSpf: Boolean(result.alignment?.spf.result) };
}

/**
 * alignment: DMARC passes on an aligned identifier that authenticates. DKIM's `d=` is the domain
 * itself; the return path aligns when it shares the organizational domain (`aspf=s`: is the domain).
 */
export function checkAlignment(sender: Sender, dkim: DeliverabilityCheck, spfAuthorized: boolean, policy: DmarcOutcome): DeliverabilityCheck {
  const { name } = sender.domain;
  const { envelope } = sender;
  const strict = policy.tags?.get('aspf') === 's';
  const aligned = strict ? envelope === name : policy.relaxedSpf;
  const dkimOk = dkim.status !== 'fail';
  const spfOk = spfAuthorized && aligned;
  const findings: Finding[] = [];
  if (!dkimOk) findings.push({ status: 'warn', detail: `DKIM (d=${name}) aligns with From, but does not verify (see dkim).`, fix: 'Fix the dkim check.' });
  if (!aligned && strict) {
    findings.push({ status: 'warn', detail: `The return path ${envelope} does not align with From ${name} under \`aspf=s\` (strict).`, fix: 'Remove `aspf=s` from the DMARC record: relaxed alignment, the default, accepts the return-path subdomain.' });
  } else if (!aligned) {
    findings.push({ status: 'warn', detail: `The return path ${envelope} does not share From's organizational domain (${name}).`, fix: `Set RELAY_ENVELOPE_SENDER to \`sender\` or to an address at ${name}.` });
  } else if (!spfAuthorized) {
    findings.push({ status: 'warn', detail: `The return path ${envelope} aligns with From, but SPF does not pass for it (see spf).`, fix: 'Fix the spf check.' });
  }
  if (!dkimOk && !spfOk) {
    return { ...checkOf('alignment', findings, ''), status: 'fail', detail: `Neither DKIM nor SPF passes aligned with From ${name}: DMARC fails for its mail. ${findings.map((f) => f.detail).join(' ')}` };
  }
  return checkOf('alignment', findings, `DKIM (d=${name}) and the return path ${envelope} both align with From ${name}.`);
}
