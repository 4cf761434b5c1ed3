import type { Context } from '../../context.ts';
import { sumDmarcSources } from '../../store/dmarc-reports.ts';
import { toTimestamp } from '../../time/clock.ts';
import { oursOf } from '../dmarc/our-sources.ts';
import { strangers, summarize } from '../dmarc/source-summary.ts';
import { checkOf, record, type DeliverabilityCheck, type Finding } from './check.ts';
import type { Sender } from './sender.ts';
import { withTags } from './tag-list.ts';

// `dmarc_reports`: what the domain's DMARC aggregate reports of the last 7 days say (domain/dmarc/):
// a source that is not Mailroom's sending as the domain and failing DMARC warns. Either someone spoofs
// the domain, or a service of yours (a CRM, a help desk) sends as it without SPF or DKIM set up.

const WINDOW_MS = 7 * 86_400_000;
/** The sources a detail names; the summary has them all. */
const NAMED = 5;

export async function checkDmarcReports(ctx: Context, sender: Sender, sending: string[], policy: Map<string, string> | undefined): Promise<DeliverabilityCheck> {
  const { domain, now } = sender;
  const address = domain.dmarc_report_address;
  if (!address) return checkOf('dmarc_reports', [], `Mailroom does not read ${domain.name}'s DMARC reports (PATCH /domains/:id {dmarc_reports: {address}} on a domain that receives).`);
  const findings: Finding[] = [];
  const rua = policy?.get('rua');
  if (policy && !rua?.toLowerCase().split(',').some((uri) => uri.trim() === `mailto:${address}`)) {
    const at = `_dmarc.${domain.name}`;
    const value = withTags([...policy].map(([name, v]) => `${name}=${v}`).join('; '), { rua: [rua, `mailto:${address}`].filter(Boolean).join(',') });
    findings.push({ status: 'warn', detail: `The DMARC record does not send its reports to ${address}, where Mailroom reads them.`, fix: `Publish ${record(at, 'TXT', value)}.` });
  }
  const { reports, sources: totals } = await sumDmarcSources(ctx.db, domain.id, toTimestamp(now - WINDOW_MS), toTimestamp(now));
  const failing = strangers(await summarize(totals, oursOf(sender, sending)));
  if (failing.length > 0) {
    const named = failing.slice(0, NAMED).map((s) => `${s.source_ip} (${s.alignment.fail} of ${s.messages} messages)`).join(', ');
    const more = failing.length > NAMED ? ` and ${failing.length - NAMED} more` : '';
    findings.push({
      status: 'warn',
      detail: `DMARC reports of the last 7 days show mail as ${domain.name} failing DMARC from addresses that are not Mailroom's: ${named}${more}.`,
      fix: `If a source is a service of yours, authorize it in SPF and have it sign with DKIM for ${domain.name}; if not, someone sends as ${domain.name}: once your own mail passes, raise the policy to \`p=quarantine\` or \`p=reject\`. GET /domains/:id/dmarc lists the sources.`,
    });
  }
  const passed = reports === 0 ? `No DMARC report for ${domain.name} arrived at ${address} in the last 7 days.` : `${reports} DMARC reports of the last 7 days: mail as ${domain.name} from others than Mailroom passes DMARC.`;
  return checkOf('dmarc_reports', findings, passed);
}
