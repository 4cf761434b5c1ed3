import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import type { ApiKeyRow } from '../../store/api-keys.ts';
import { findDomainById } from '../../store/domains.ts';
import { domainOf } from '../recipients/addresses.ts';
import { SENDABLE } from './domain-verification.ts';

/**
 * Who sends: the project, and the API key's domain when a `sending_access` key is bound to one (a send
 * of Mailroom's own, a broadcast's or an automation's, has no key: `senderOf(project)`).
 */
export type SenderKey = Pick<ApiKeyRow, 'domain_id' | 'project_id'>;

export const senderOf = (project: string): SenderKey => ({ domain_id: null, project_id: project });

/**
 * The rules on a `from` address's domain (its ASCII form, as parseMailbox returns it): a key bound to a
 * domain sends only from it, a domain with sending disabled (one that only receives) does not send,
 * and with MAILROOM_REQUIRE_VERIFIED_DOMAIN only verified domains send (Resend's test domain,
 * resend.dev, included). All answer 403 `validation_error`, as Resend does.
 */
export async function checkSenderDomain(ctx: Context, fromAddress: string, key: SenderKey): Promise<void> {
  const name = domainOf(fromAddress);
  if (key.domain_id) {
    const allowed = await findDomainById(ctx.db, key.domain_id);
    if (allowed?.name !== name) {
      throw new AppError('forbidden', `This API key can only send from ${allowed ? `the ${allowed.name} domain` : 'a domain that has been deleted'}.`);
    }
  }
  const found = await ctx.domains.find(name);
  // A name is one project's at most, and signs with that project's DKIM key: no other project sends from it.
  if (found && found.project_id !== key.project_id) {
    throw new AppError('forbidden', `The ${name} domain is not one of this project's domains.`);
  }
  const domain = found;
  if (domain?.sending === 'disabled') {
    throw new AppError('forbidden', `The ${name} domain does not send: its \`capabilities.sending\` is "disabled" (see docs/domains.md).`);
  }
  if (!ctx.config.requireVerifiedDomain) return;
  if (!domain || !SENDABLE.has(domain.status)) {
    throw new AppError(
      'forbidden',
      `The ${name} domain is not verified. Please, add and verify your domain with POST /domains and POST /domains/:id/verify (see docs/domains.md).`,
    );
  }
}
