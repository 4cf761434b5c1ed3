import { mtaStsPolicyId } from '../sending-domains/mta-sts.ts';
import { checkOf, record, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import type { Sender } from './sender.ts';
import { tagsOf } from './tag-list.ts';

// `mta_sts` and `tls_rpt`: the domain's own policies for mail sent to it (RFC 8461, RFC 8460): other
// servers deliver to it over verified TLS only, and report when they cannot. Only the records are
// looked up; MTA-STS's policy file (https://mta-sts.<domain>/.well-known/mta-sts.txt) is not fetched.

/** The records at `name` that start with `version`, or the failed lookup's finding. */
async function recordsAt(sender: Sender, name: string, version: RegExp): Promise<string[] | Finding> {
  try {
    return (await sender.lookups.txt(name)).filter((text) => version.test(text.trim()));
  } catch (error) {
    return unanswered(name, error);
  }
}

/** An MTA-STS id: the one of the policy Mailroom serves for a domain that receives here, else the day of the check, as RFC 8461's examples write it. */
const policyId = (sender: Sender) =>
  sender.domain.receiving === 'enabled' ? mtaStsPolicyId(sender.config) : new Date(sender.now).toISOString().slice(0, 10).replace(/-/g, '');

export async function checkMtaSts(sender: Sender): Promise<DeliverabilityCheck> {
  const { name } = sender.domain;
  const at = `_mta-sts.${name}`;
  const served =
    sender.domain.receiving === 'enabled'
      ? `Mailroom serves its policy at https://mta-sts.${name}/.well-known/mta-sts.txt once ${record(`mta-sts.${name}`, 'CNAME', new URL(sender.config.publicUrl).hostname)} is published (behind https with a certificate for that name): publish it`
      : `Publish a policy at https://mta-sts.${name}/.well-known/mta-sts.txt`;
  const fresh = `${served}, then ${record(at, 'TXT', `v=STSv1; id=${policyId(sender)}`)}.`;
  const found = await recordsAt(sender, at, /^v=STSv1\s*(;|$)/i);
  if (!Array.isArray(found)) return checkOf('mta_sts', [found], '');
  const findings: Finding[] = [];
  if (found.length === 0) findings.push({ status: 'warn', detail: `${name} has no MTA-STS record: servers sending to it fall back to plain text when STARTTLS is stripped on the way.`, fix: fresh });
  else if (found.length > 1) findings.push({ status: 'fail', detail: `${at} has ${found.length} MTA-STS records: senders ignore the policy.`, fix: `Keep one: ${record(at, 'TXT', found[0]!.trim())}.` });
  else if (!/^[A-Za-z0-9]{1,32}$/.test(tagsOf(found[0]!).get('id') ?? '')) {
    findings.push({ status: 'fail', detail: `The MTA-STS record at ${at} has no valid \`id\` (1 to 32 letters and digits): senders ignore it.`, fix: `Replace it with ${record(at, 'TXT', `v=STSv1; id=${policyId(sender)}`)}.` });
  }
  return checkOf('mta_sts', findings, `${at} announces an MTA-STS policy (id=${found.length === 1 ? tagsOf(found[0]!).get('id') : ''}).`);
}

export async function checkTlsRpt(sender: Sender): Promise<DeliverabilityCheck> {
  const { name } = sender.domain;
  const at = `_smtp._tls.${name}`;
  const fresh = record(at, 'TXT', `v=TLSRPTv1; rua=mailto:${sender.domain.dmarc_report_address ?? `tls-reports@${name}`}`);
  const found = await recordsAt(sender, at, /^v=TLSRPTv1\s*(;|$)/i);
  if (!Array.isArray(found)) return checkOf('tls_rpt', [found], '');
  const findings: Finding[] = [];
  const rua = found.length === 1 ? tagsOf(found[0]!).get('rua') : undefined;
  if (found.length === 0) findings.push({ status: 'warn', detail: `${name} has no TLS-RPT record: nobody hears when servers fail to deliver to it over TLS.`, fix: `Publish ${fresh} (rua: an address of yours that reads the reports).` });
  else if (found.length > 1) findings.push({ status: 'fail', detail: `${at} has ${found.length} TLS-RPT records: senders send no reports.`, fix: `Keep one: ${record(at, 'TXT', found[0]!.trim())}.` });
  else if (!rua || !rua.split(',').every((uri) => /^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/i.test(uri.trim()))) {
    findings.push({ status: 'fail', detail: `The TLS-RPT record at ${at} has no valid \`rua\` (mailto: or https: addresses).`, fix: `Replace it with ${fresh}.` });
  }
  return checkOf('tls_rpt', findings, `${at} sends TLS reports to ${rua}.`);
}
