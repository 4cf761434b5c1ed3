import type { FastifyRequest } from 'fastify';
import { isoTime } from '../time/clock.ts';
import { html } from './html.ts';

// Small pieces the pages share: the CSRF field every form carries, a status badge, a time.

export const csrfField = (request: FastifyRequest) => html`<input type="hidden" name="_csrf" value="${request.signedIn!.csrfToken}">`;

export const status = (value: string) => html`<span class="status status-${value}">${value.replaceAll('_', ' ')}</span>`;

/** A stored timestamp, shown to the second, its `datetime` in ISO 8601; `ifNone` when there is none. */
export const when = (at: string | null, ifNone = '') => (at ? html`<time datetime="${isoTime(at)}">${at.slice(0, 19)}</time>` : ifNone);
