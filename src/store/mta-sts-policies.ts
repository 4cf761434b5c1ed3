import type { StsMode, StsPolicy } from '../delivery/mta-sts-policy.ts';
import type { Db, Tx } from './db.ts';

/** The policy kept for `domain`, and when it expires (epoch ms). */
export async function findStsPolicy(db: Db, domain: string): Promise<{ policy: StsPolicy; expiresAt: number } | undefined> {
  const row = await db.selectFrom('mta_sts_policies').selectAll().where('domain', '=', domain).executeTakeFirst();
  if (!row) return undefined;
  const policy = { id: row.policy_id, mode: row.mode as StsMode, mx: JSON.parse(row.mx) as string[], maxAge: Number(row.max_age), text: JSON.parse(row.policy) as string[] };
  return { policy, expiresAt: Number(row.expires_at) };
}

/** Keeps `policy` for `domain` until `expiresAt`, in place of the one kept. */
export async function saveStsPolicy(tx: Tx, domain: string, policy: StsPolicy, fetchedAt: number, expiresAt: number): Promise<void> {
  const row = {
    domain,
    policy_id: policy.id,
    mode: policy.mode,
    mx: JSON.stringify(policy.mx),
    max_age: policy.maxAge,
    policy: JSON.stringify(policy.text),
    fetched_at: fetchedAt,
    expires_at: expiresAt,
  };
  const { domain: _key, ...changes } = row;
  await tx.insertInto('mta_sts_policies').values(row).onConflict((oc) => oc.column('domain').doUpdateSet(changes)).execute();
}

/** The mode and expiry (epoch ms) of the policies kept for `domains`. */
export async function findStsModes(db: Db, domains: string[]): Promise<{ domain: string; mode: string; expires_at: number }[]> {
  if (domains.length === 0) return [];
  const rows = await db.selectFrom('mta_sts_policies').select(['domain', 'mode', 'expires_at']).where('domain', 'in', domains).execute();
  return rows.map((r) => ({ ...r, expires_at: Number(r.expires_at) }));
}
