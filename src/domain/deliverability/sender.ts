import type { Config } from '../../config.ts';
import type { DomainRow } from '../../store/domains.ts';
import { domainRecords, type DnsRecord } from '../sending-domains/domain-records.ts';
import { domainOf } from '../recipients/addresses.ts';
import type { Lookups } from './lookups.ts';

// A domain as the checks see it: where its mail comes from, by the delivery mode. Direct mode (and
// capture, checked as it would send) sends from this host's addresses with a VERP return path on the
// domain's return-path subdomain; relay mode sends through SMTP_URL with RELAY_ENVELOPE_SENDER.

/** Providers' SPF includes, by their SMTP host (docs/deliverability.md lists them). */
const RELAY_INCLUDES: [RegExp, string][] = [
  [/(^|\.)sendgrid\.net$/, 'sendgrid.net'],
  [/^email-smtp\.[a-z0-9-]+\.amazonaws\.com$/, 'amazonses.com'],
  // Resend sends through Amazon SES.
  [/(^|\.)resend\.com$/, 'amazonses.com'],
  [/(^|\.)mailgun\.org$/, 'mailgun.org'],
  [/(^|\.)postmarkapp\.com$/, 'spf.mtasv.net'],
  [/(^|\.)(brevo|sendinblue)\.com$/, 'spf.brevo.com'],
  [/(^|\.)mailjet\.com$/, 'spf.mailjet.com'],
  [/(^|\.)sparkpostmail\.com$/, 'sparkpostmail.com'],
  [/^smtp(-relay)?\.gmail\.com$/, '_spf.google.com'],
  [/^smtp\.office365\.com$/, 'spf.protection.outlook.com'],
];

export interface Relay {
  host: string;
  /** The include its senders' SPF records need; undefined for a host not in the list. */
  include: string | undefined;
}

export interface Sender {
  domain: DomainRow;
  config: Config;
  lookups: Lookups;
  /** The envelope sender's (MAIL FROM) domain: SPF is checked for it, bounces go to its MX. */
  envelope: string;
  /** Bounces come back to this host: a VERP envelope sender on the return-path subdomain. */
  verp: boolean;
  relay: Relay | undefined;
  /** The records Mailroom lists for the domain's sending, whatever its capabilities: the fixes quote them. */
  records: Record<'spf_mx' | 'spf_txt' | 'dkim' | 'dmarc', DnsRecord>;
  /** The time of the check (epoch ms). */
  now: number;
}

export function relayOf(smtpUrl: string): Relay {
  const host = new URL(smtpUrl).hostname.toLowerCase();
  return { host, include: RELAY_INCLUDES.find(([pattern]) => pattern.test(host))?.[1] };
}

export function senderOf(domain: DomainRow, config: Config, lookups: Lookups, now: number): Sender {
  const returnPath = `${domain.custom_return_path}.${domain.name}`;
  const listed = domainRecords({ ...domain, sending: 'enabled' }, config);
  const records = Object.fromEntries(listed.map((r) => [r.key, r])) as Sender['records'];
  const base = { domain, config, lookups, records, now };
  if (config.deliveryMode !== 'relay') return { ...base, envelope: returnPath, verp: true, relay: undefined };
  const relay = relayOf(config.smtpUrl!);
  const setting = config.relayEnvelopeSender;
  if (setting === 'verp') return { ...base, envelope: returnPath, verp: true, relay };
  return { ...base, envelope: setting === 'sender' ? domain.name : domainOf(setting.address).toLowerCase(), verp: false, relay };
}
