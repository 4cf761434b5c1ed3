// Recipient domains with MTA-STS for direct delivery's tests: each domain's MX host on its own
// 127.0.0.x, its `_mta-sts` record and its policy host (the local HTTPS server, on 127.0.0.1).
import type { TestDnsServer } from './dns-server.ts';

/** A policy file (RFC 8461 3.2) of `mode` naming `mx` patterns, kept a day. */
export const stsPolicy = (mode: string, ...mx: string[]) => ['version: STSv1', `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), 'max_age: 86400', ''].join('\r\n');

/** Publishes each [domain, MX host, its address]; every domain but those `withoutPolicy` gets an `_mta-sts` record and its policy host. */
export function publishRecipients(dns: TestDnsServer, recipients: readonly (readonly [string, string, string])[], withoutPolicy: string[] = []): void {
  for (const [domain, mx, ip] of recipients) {
    dns.add(domain, { MX: [{ exchange: mx, priority: 10 }] });
    dns.add(mx, { A: [ip] });
    if (withoutPolicy.includes(domain)) continue;
    dns.add(`_mta-sts.${domain}`, { TXT: ['v=STSv1; id=20260101'] });
    dns.add(`mta-sts.${domain}`, { A: ['127.0.0.1'] });
  }
}
