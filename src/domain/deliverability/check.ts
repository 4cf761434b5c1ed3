import type { DeliverabilityCheck } from '../../store/domain-deliverability.ts';

// What every check is made of: findings, each a status with what was seen and what to do; a check is
// as bad as its worst finding, and a check with none passes.

export type CheckStatus = DeliverabilityCheck['status'];
export type { DeliverabilityCheck };

/** Something a check saw: `fix` says what to change, for a warn or a fail. */
export interface Finding {
  status: CheckStatus;
  detail: string;
  fix?: string;
}

const RANK: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** The worse of two statuses. */
export const worse = (a: CheckStatus, b: CheckStatus): CheckStatus => (RANK[b] > RANK[a] ? b : a);

/** The worst status of a list (pass when empty). */
export const worstOf = (statuses: CheckStatus[]): CheckStatus => statuses.reduce(worse, 'pass');

/** A check from its findings: the worst one's status, every detail, every fix; `passed` when none is a problem. */
export function checkOf(id: string, findings: Finding[], passed: string): DeliverabilityCheck {
  const problems = findings.filter((finding) => finding.status !== 'pass');
  if (problems.length === 0) return { id, status: 'pass', detail: [passed, ...findings.map((f) => f.detail)].filter(Boolean).join(' '), fix: null };
  const fixes = problems.map((finding) => finding.fix).filter((fix): fix is string => fix !== undefined);
  return { id, status: worstOf(problems.map((f) => f.status)), detail: problems.map((f) => f.detail).join(' '), fix: fixes.length > 0 ? fixes.join(' ') : null };
}

/** A lookup that failed (a timeout, SERVFAIL): the check could not say, so it warns. */
export function unanswered(name: string, error: unknown): Finding {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return {
    status: 'warn',
    detail: `The DNS lookup of ${name} failed (${code}), so this was not checked.`,
    fix: 'Nothing to change if the records are right: the check runs again daily, or now with POST /domains/:id/deliverability.',
  };
}

/** A DNS record as a fix names it, as a zone file line would: `name` TYPE `value`. */
export const record = (name: string, type: string, value: string): string => `\`${name}\` ${type} \`${value}\``;

/** A share as the details write it: 0.25%. */
export const percent = (fraction: number): string => `${(fraction * 100).toFixed(2)}%`;
