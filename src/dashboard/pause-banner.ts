import type { SendingPause } from '../domain/sending-domains/domains.ts';
import { html, type Html } from './html.ts';
import { when } from './page-parts.ts';

// The guards' pause of a domain's marketing mail, shown on the domain's page and on its deliverability
// page: why, since when, and a Resume button (POST /dashboard/domains/:id/resume).

/** The page a Resume came from, named in its form's `back` field. */
export type ResumeReturn = 'domain' | 'deliverability';

export const RESUMED = 'Marketing mail resumed: the broadcast emails and automation steps that waited go out now.';

/** The banner of a paused domain; nothing when it is not paused. */
export function pauseBanner(domain: { id: string; name: string; sending_paused: SendingPause | null }, csrfToken: string, back: ResumeReturn): Html | '' {
  const paused = domain.sending_paused;
  if (!paused) return '';
  return html`<section class="notice" role="alert" aria-labelledby="paused"><h2 id="paused">Marketing mail paused</h2>
<p>${paused.reason} Broadcasts and automations from ${domain.name} wait since ${when(paused.since.replace('T', ' '))}; transactional mail goes on.</p>
<form class="inline" method="post" action="/dashboard/domains/${domain.id}/resume">
<input type="hidden" name="_csrf" value="${csrfToken}"><input type="hidden" name="back" value="${back}"><button type="submit">Resume marketing mail</button>
</form></section>`;
}

/** Where a Resume returns: the page its form came from, a fixed path never taken from the form. */
export const afterResume = (id: string, back: string | undefined) => `/dashboard/domains/${id}${back === 'deliverability' ? '/deliverability' : ''}?done=resumed`;
