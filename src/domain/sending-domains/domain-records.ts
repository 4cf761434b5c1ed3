import type { Config } from '../../config.ts';
import { RECORD_KEYS, type DomainRow, type RecordKey, type RecordStatuses } from '../../store/domains.ts';
import { mtaStsPolicyId } from './mta-sts.ts';

// The DNS records a domain publishes for Mailroom, in Resend's shape. Names are relative to the
// domain, as Resend writes them (`send`, `mailroom._domainkey`; `@` is the domain itself).

export interface DnsRecord {
  key: RecordKey;
  record: 'SPF' | 'DKIM' | 'DMARC' | 'Receiving' | 'MTA-STS' | 'TLS-RPT' | 'Tracking';
  name: string;
  /** The fully qualified name looked up when verifying. */
  fqdn: string;
  type: 'MX' | 'TXT' | 'CNAME';
  value: string;
  priority?: number;
  /**
   * Whether the domain's status waits for it. The status speaks for sending: DMARC is a
   * recommendation, and the Receiving record has its own rule (receiving-domain.ts), except on a
   * domain that only receives, whose status it alone makes. The Tracking CNAME is optional too: until
   * it is verified, tracking links use MAILROOM_PUBLIC_URL (domain/tracking/tracked-html.ts).
   */
  required: boolean;
}

type RecordSource = Pick<
  DomainRow,
  'name' | 'custom_return_path' | 'dkim_selector' | 'dkim_public_key' | 'sending' | 'receiving' | 'tracking_subdomain' | 'dmarc_report_address'
>;

/** The names the records point to: this server's mail host, and the host of its public URL; and whether SMTP has a certificate of its own (MTA-STS's mode). */
export type RecordHosts = Pick<Config, 'mailHostname' | 'publicUrl' | 'smtpTls'>;

/**
 * The records of the enabled capabilities. Sending: SPF, an MX and a TXT on the return-path subdomain
 * (the envelope sender's domain in direct mode, where bounces go); DKIM, the public key; DMARC, a
 * monitoring policy to start from, its reports to the domain's report address when it has one.
 * Receiving: an MX on the domain itself, naming this server, and MTA-STS (mta-sts.ts: the policy's
 * host, a CNAME to the public URL's, and its id) and TLS-RPT (where failures to deliver over TLS are
 * reported: the report address, else tls-reports@). With a tracking subdomain, Tracking: a CNAME from it to the host of MAILROOM_PUBLIC_URL, which serves the
 * open and click URLs.
 */
export function domainRecords(domain: RecordSource, hosts: RecordHosts): DnsRecord[] {
  const { mailHostname } = hosts;
  const returnPath = domain.custom_return_path;
  const dkimName = `${domain.dkim_selector}._domainkey`;
  const fqdn = (name: string) => `${name}.${domain.name}`;
  const sends = domain.sending === 'enabled';
  const reports = domain.dmarc_report_address;
  const publicHost = new URL(hosts.publicUrl).hostname;
  const sending: DnsRecord[] = [
    { key: 'spf_mx', record: 'SPF', name: returnPath, fqdn: fqdn(returnPath), type: 'MX', value: mailHostname, priority: 10, required: true },
    { key: 'spf_txt', record: 'SPF', name: returnPath, fqdn: fqdn(returnPath), type: 'TXT', value: `v=spf1 a:${mailHostname} ~all`, required: true },
    { key: 'dkim', record: 'DKIM', name: dkimName, fqdn: fqdn(dkimName), type: 'TXT', value: `p=${domain.dkim_public_key}`, required: true },
    { key: 'dmarc', record: 'DMARC', name: '_dmarc', fqdn: fqdn('_dmarc'), type: 'TXT', value: `v=DMARC1; p=none;${reports ? ` rua=mailto:${reports};` : ''}`, required: false },
  ];
  const receiving: DnsRecord[] = [
    { key: 'receiving_mx', record: 'Receiving', name: '@', fqdn: domain.name, type: 'MX', value: mailHostname, priority: 10, required: !sends },
    { key: 'mta_sts_host', record: 'MTA-STS', name: 'mta-sts', fqdn: fqdn('mta-sts'), type: 'CNAME', value: publicHost, required: false },
    { key: 'mta_sts', record: 'MTA-STS', name: '_mta-sts', fqdn: fqdn('_mta-sts'), type: 'TXT', value: `v=STSv1; id=${mtaStsPolicyId(hosts)}`, required: false },
    {
      key: 'tls_rpt',
      record: 'TLS-RPT',
      name: '_smtp._tls',
      fqdn: fqdn('_smtp._tls'),
      type: 'TXT',
      value: `v=TLSRPTv1; rua=mailto:${reports ?? `tls-reports@${domain.name}`}`,
      required: false,
    },
  ];
  const sub = domain.tracking_subdomain;
  const tracking: DnsRecord[] =
    sub === null ? [] : [{ key: 'tracking', record: 'Tracking', name: sub, fqdn: fqdn(sub), type: 'CNAME', value: publicHost, required: false }];
  return [...(sends ? sending : []), ...(domain.receiving === 'enabled' ? receiving : []), ...tracking];
}

/** Every record in the same status (a new domain: not_started). */
export function allRecords(status: string): RecordStatuses {
  return Object.fromEntries(RECORD_KEYS.map((key) => [key, status])) as RecordStatuses;
}

/** The records as the API shows them: `{record, name, type, ttl, status, value, priority?}`. */
export function recordsOf(domain: RecordSource & Pick<DomainRow, 'record_statuses'>, hosts: RecordHosts) {
  return domainRecords(domain, hosts).map((r) => ({
    record: r.record,
    name: r.name,
    type: r.type,
    ttl: 'Auto',
    status: domain.record_statuses[r.key],
    value: r.value,
    ...(r.priority === undefined ? {} : { priority: r.priority }),
  }));
}
