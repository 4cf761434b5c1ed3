import type { DomainRow, RecordKey, RecordStatuses } from '../../store/domains.ts';

// The DNS records a domain publishes for Mailroom, in Resend's shape. Names are relative to the
// domain, as Resend writes them (`send`, `mailroom._domainkey`).

export interface DnsRecord {
  key: RecordKey;
  record: 'SPF' | 'DKIM' | 'DMARC';
  name: string;
  /** The fully qualified name looked up when verifying. */
  fqdn: string;
  type: 'MX' | 'TXT';
  value: string;
  priority?: number;
  /** Whether the domain's verification waits for it; DMARC is a recommendation. */
  required: boolean;
}

type RecordSource = Pick<DomainRow, 'name' | 'custom_return_path' | 'dkim_selector' | 'dkim_public_key'>;

/**
 * SPF: an MX and a TXT on the return-path subdomain (the envelope sender's domain in direct mode,
 * where bounces go); DKIM: the public key; DMARC: a monitoring policy to start from.
 */
export function domainRecords(domain: RecordSource, mailHostname: string): DnsRecord[] {
  const returnPath = domain.custom_return_path;
  const dkimName = `${domain.dkim_selector}._domainkey`;
  const fqdn = (name: string) => `${name}.${domain.name}`;
  return [
    { key: 'spf_mx', record: 'SPF', name: returnPath, fqdn: fqdn(returnPath), type: 'MX', value: mailHostname, priority: 10, required: true },
    { key: 'spf_txt', record: 'SPF', name: returnPath, fqdn: fqdn(returnPath), type: 'TXT', value: `v=spf1 a:${mailHostname} ~all`, required: true },
    { key: 'dkim', record: 'DKIM', name: dkimName, fqdn: fqdn(dkimName), type: 'TXT', value: `p=${domain.dkim_public_key}`, required: true },
    { key: 'dmarc', record: 'DMARC', name: '_dmarc', fqdn: fqdn('_dmarc'), type: 'TXT', value: 'v=DMARC1; p=none;', required: false },
  ];
}

/** Every record in the same status (a new domain: not_started). */
export function allRecords(status: string): RecordStatuses {
  return { spf_mx: status, spf_txt: status, dkim: status, dmarc: status };
}

/** The records as the API shows them: `{record, name, type, ttl, status, value, priority?}`. */
export function recordsOf(domain: RecordSource & Pick<DomainRow, 'record_statuses'>, mailHostname: string) {
  return domainRecords(domain, mailHostname).map((r) => ({
    record: r.record,
    name: r.name,
    type: r.type,
    ttl: 'Auto',
    status: domain.record_statuses[r.key],
    value: r.value,
    ...(r.priority === undefined ? {} : { priority: r.priority }),
  }));
}
