import { isUuid } from '../time/ids.ts';
import type { PageRequest } from '../store/paginate.ts';
import { html, type Html } from './html.ts';

/** The page a list's query string asks for: `after` or `before` an id (a bad cursor is ignored), `size` rows. */
export function readPage(query: Record<string, string | undefined>, size: number): PageRequest {
  const cursor = (value: string | undefined) => (value && isUuid(value) ? value.toLowerCase() : undefined);
  const after = cursor(query.after);
  return { limit: size, after, before: after ? undefined : cursor(query.before) };
}

/** Newer and older links around a page of rows, keeping the list's other parameters. */
export function pager(path: string, query: Record<string, string | undefined>, page: { has_more: boolean; data: { id: string }[] }): Html {
  const link = (name: 'after' | 'before', id: string) => {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== 'after' && e[0] !== 'before'));
    params.set(name, id);
    return `${path}?${params.toString()}`;
  };
  const [first, last] = [page.data[0], page.data.at(-1)];
  const goingBack = query.before !== undefined;
  const newer = first && (query.after !== undefined || (goingBack && page.has_more)) ? html`<a href="${link('before', first.id)}" rel="prev">Newer</a>` : '';
  const older = last && (goingBack || page.has_more) ? html`<a href="${link('after', last.id)}" rel="next">Older</a>` : '';
  return html`<nav class="pager" aria-label="Pages">${newer} ${older}</nav>`;
}
