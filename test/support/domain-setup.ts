// Adding, reading and verifying domains through the SDK, for the tests of domains, sending rules,
// DKIM and direct delivery.
import assert from 'node:assert/strict';
import { eventually, type TestApp } from './harness.ts';
import { publishRecords, type TestDnsServer } from './dns-server.ts';

export const HOSTNAME = 'mail.mailroom.test';
export const HOUR = 3600_000;

export type Domain = { id: string; name: string; status: string; records: { record: string; name: string; type: string; status: string; value: string; priority?: number }[] };

export async function domainOf(t: TestApp, id: string): Promise<Domain> {
  const { data, error } = await t.resend.domains.get(id);
  assert.equal(error, null);
  return data;
}

export async function statusBecomes(t: TestApp, id: string, status: string): Promise<Domain> {
  return eventually(async () => {
    const domain = await domainOf(t, id);
    return domain.status === status && domain;
  });
}

/** Waits until the verify job has looked the records up `checks` times since it was (re)created. */
export async function checked(t: TestApp, id: string, checks = 1): Promise<void> {
  await eventually(async () => {
    const job = await t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', `verify-domain:${id}`).executeTakeFirst();
    return (!job || (job.attempts >= checks && job.locked_at === null)) || undefined;
  });
}

export async function createDomain(t: TestApp, name: string, options: { tls?: 'enforced' | 'opportunistic' } = {}): Promise<Domain> {
  const { data, error } = await t.resend.domains.create({ name, ...options });
  assert.equal(error, null);
  return data;
}

/** A domain added, its records published, verified. */
export async function verifiedDomain(t: TestApp, dns: TestDnsServer, name: string, options: { tls?: 'enforced' } = {}): Promise<Domain> {
  const domain = await createDomain(t, name, options);
  publishRecords(dns, domain);
  await t.resend.domains.verify(domain.id);
  return statusBecomes(t, domain.id, 'verified');
}

/** The address mail leaves from in the deliverability tests (MAILROOM_SENDING_IPS), and its PTR name. */
export const SENDING_IP = '203.0.113.10';
export const SENDING_PTR = '10.113.0.203.in-addr.arpa';

/**
 * A direct-mode host the deliverability check finds in order: HOSTNAME resolves to SENDING_IP and back
 * (A and PTR on `dns`); the env of an app checking it, its blocklists `zones`.
 */
export function sendingHost(dns: TestDnsServer, zones: string): Record<string, string> {
  dns.add(HOSTNAME, { A: [SENDING_IP] });
  dns.add(SENDING_PTR, { PTR: [HOSTNAME] });
  return {
    DNS_SERVERS: dns.address,
    MAILROOM_HOSTNAME: HOSTNAME,
    DELIVERY_MODE: 'direct',
    MAILROOM_SENDING_IPS: SENDING_IP,
    MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false',
    MAILROOM_DNSBL_ZONES: zones,
  };
}
