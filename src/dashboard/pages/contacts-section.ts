import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { compileCheck } from '../../http/validation.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';

// What the contacts section's pages share: the links between them, the CSRF field, reading a form,
// and the notice a change leaves on the page it returns to.

export type Form = Record<string, string | undefined>;

const PAGES = [
  ['/dashboard/contacts', 'Contacts'],
  ['/dashboard/contacts/segments', 'Segments'],
  ['/dashboard/contacts/topics', 'Topics'],
  ['/dashboard/contacts/properties', 'Properties'],
] as const;

type SubPage = (typeof PAGES)[number][1];

// A change redirects with ?done=<code>; the page says what happened. Only these texts can appear.
const NOTICES: Record<string, string> = {
  created: 'Created.',
  saved: 'Saved.',
  deleted: 'Deleted.',
  added: 'Added to the segment.',
  removed: 'Removed from the segment.',
};

/** A page of the contacts section: the sub-navigation, then the content. */
export function sectionPage(request: FastifyRequest, title: string, current: SubPage, content: Html): string {
  const nav = html`<nav class="subnav" aria-label="Contacts section"><ul>${PAGES.map(
    ([path, label]) => html`<li><a href="${path}"${label === current ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>`;
  const done = (request.query as Form).done;
  return page(title, html`${nav}${content}`, {
    section: 'contacts',
    csrfToken: request.session!.csrfToken,
    notice: done === undefined ? undefined : NOTICES[done],
  });
}


export const formOf = (request: FastifyRequest): Form => (request.body ?? {}) as Form;

/** A form's text: trimmed, and empty means none. */
export const textOf = (value: string | undefined): string | null => value?.trim() || null;

/** A property value typed in a form: a number property's text as a number when it reads as one (else as given, for the domain to refuse). */
export function propertyValueOf(type: string, value: string | undefined): string | number | null {
  const text = textOf(value);
  if (text === null || type !== 'number') return text;
  return Number.isFinite(Number(text)) ? Number(text) : text;
}

/**
 * A check of what a form gives against the body schema of the API route that does the same change, so
 * that a page accepts exactly what the API does (lengths, choices); a failure is the API's message.
 */
export function bodyCheck<T>(schema: TSchema): (value: T) => T {
  const check = compileCheck<T>(schema);
  return (value) => {
    const result = check(value);
    if ('error' in result) throw result.error;
    return result.value;
  };
}

