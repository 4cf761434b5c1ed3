import { verifyDomain as verify } from '../domain/sending-domains/verify-domain.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One check of a domain's DNS records (domain/sending-domains/verify-domain.ts). */
export const verifyDomain: TaskDeclaration<'verify-domain'> = {
  // The 72-hour window ends the checks (domain-verification.ts), not the count: about 20 at most.
  attempts: () => 1000,
  run: verify,
};
