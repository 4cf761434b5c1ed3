import type { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { lookupTxt } from '../dns.ts';
import type { Clock } from '../time/clock.ts';
import { HttpsFailure, httpsRequest } from './https-request.ts';
import { parseStsPolicy, stsRecordId, type StsPolicy } from './mta-sts-policy.ts';

// A recipient domain's MTA-STS policy (RFC 8461 5.1): its `_mta-sts` TXT id, then the policy from
// `https://mta-sts.<domain>/.well-known/mta-sts.txt`, kept in the database for its max_age (every worker
// shares it) and fetched again when the id changes. A policy that cannot be had leaves the one kept in
// force. Each process remembers a domain's answer for a few minutes, so a message costs no lookup.

/** Why a domain that publishes a policy has none in force now: RFC 8460's result types. */
export type StsFailure = 'sts-policy-fetch-error' | 'sts-policy-invalid' | 'sts-webpki-invalid';

/** What delivery to a domain follows: its policy (enforce or testing), a failure to get one, or nothing. */
export type PolicyLookup = { policy: StsPolicy } | { failure: StsFailure; detail: string } | undefined;

/** The policies kept in the database (store/mta-sts-policies.ts). */
export interface StsCache {
  find(domain: string): Promise<{ policy: StsPolicy; expiresAt: number } | undefined>;
  save(domain: string, policy: StsPolicy, expiresAt: number): Promise<void>;
}

export interface StsPolicies {
  policyOf(domain: string): Promise<PolicyLookup>;
}

/** How long a process trusts what it found for a domain before it asks DNS again. */
const REMEMBER_MS = 5 * 60_000;
const MAX_REMEMBERED = 10_000;
/** RFC 8461 3.3: a policy is at most 64 KB. */
const MAX_POLICY_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 15_000;
const HOST_NAME = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

export function createStsPolicies(config: Config, resolver: Resolver, clock: Clock, cache: StsCache, log: Logger): StsPolicies {
  const ca = config.outboundCaFile ? readFileSync(config.outboundCaFile, 'utf8') : undefined;
  const { port, allowPrivate } = config.mtaSts;
  const remembered = new Map<string, { until: number; answer: Promise<PolicyLookup> }>();

  async function fetchPolicy(domain: string, id: string): Promise<StsPolicy | { failure: StsFailure; detail: string }> {
    const url = new URL(`https://mta-sts.${domain}/.well-known/mta-sts.txt`);
    try {
      const { status, body } = await httpsRequest(url, { method: 'GET', port, ca, resolver, allowPrivate, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_POLICY_BYTES });
      if (status !== 200) return { failure: 'sts-policy-fetch-error', detail: `${url.host} answered ${status}${status >= 300 && status < 400 ? ' (a redirect, not followed)' : ''}` };
      const parsed = parseStsPolicy(id, body.toString('utf8'));
      return 'invalid' in parsed ? { failure: 'sts-policy-invalid', detail: parsed.invalid } : parsed;
    } catch (error) {
      if (!(error instanceof HttpsFailure)) throw error;
      return { failure: error.certificate ? 'sts-webpki-invalid' : 'sts-policy-fetch-error', detail: `${url.host}: ${error.message}` };
    }
  }

  async function discover(domain: string): Promise<PolicyLookup> {
    // An address literal (`user@[192.0.2.1]`) names no domain, so no policy.
    if (!HOST_NAME.test(domain)) return undefined;
    const now = clock.now();
    const kept = await cache.find(domain);
    const valid = kept && kept.expiresAt > now ? kept.policy : undefined;
    const inForce = (policy: StsPolicy | undefined): PolicyLookup => (policy && policy.mode !== 'none' ? { policy } : undefined);
    let id: string | undefined;
    try {
      id = stsRecordId(await lookupTxt(resolver, `_mta-sts.${domain}`));
    } catch {
      return inForce(valid); // DNS failing: what is kept stays in force
    }
    if (id === undefined || valid?.id === id) return inForce(valid);
    const fetched = await fetchPolicy(domain, id);
    if ('failure' in fetched) {
      log.info({ domain, failure: fetched.failure, detail: fetched.detail }, 'MTA-STS policy could not be fetched');
      return valid ? inForce(valid) : fetched;
    }
    await cache.save(domain, fetched, now + fetched.maxAge * 1000);
    return inForce(fetched);
  }

  return {
    policyOf(domain) {
      const now = clock.now();
      const known = remembered.get(domain);
      if (known && known.until > now) return known.answer;
      if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
      const answer = discover(domain);
      remembered.set(domain, { until: now + REMEMBER_MS, answer });
      // A failure of ours (the database away) is not remembered: the next message asks again.
      answer.catch(() => remembered.delete(domain));
      return answer;
    },
  };
}
