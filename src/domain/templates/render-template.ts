// Placeholders `{{{NAME}}}` and `{{{NAME|fallback}}}`, found once and filled many times. Pure and
// synchronous: the rules of what a name may be, or must be supplied, belong to the callers (templates,
// broadcasts). Anything that is not exactly a placeholder is text and is left as it stands.

export interface Placeholder {
  /** Letters, digits and `_`, in dot-separated parts: `PRODUCT`, `contact.first_name`. */
  name: string;
  /** The text after `|`, written by the template's author; undefined when there is no `|`. */
  fallback: string | undefined;
}

/** A parsed source: `texts[i]` comes before `placeholders[i]`; there is one more text than placeholders. */
export interface ParsedTemplate {
  texts: string[];
  placeholders: Placeholder[];
}

export type Value = string | number;

/** At most this many placeholders in one source: each may take a value thousands of characters long. */
export const MAX_PLACEHOLDERS = 1000;

/** The longest a rendered template part may be: what placeholders add is bounded, and so is memory. */
export const MAX_RENDERED_LENGTH = 20 * 1024 * 1024;

// A name, read where a `{{{` ends. The fallback may hold anything but a closing brace, so the first `}}}`
// after the `|` ends the placeholder.
const NAME = /[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*/y;

/**
 * Splits a source into its texts and placeholders, in one pass: a scan by position rather than one
 * pattern, whose retries from every `{{{` that does not close would take time in the square of the
 * source's length.
 */
export function parseTemplate(source: string): ParsedTemplate {
  const texts: string[] = [];
  const placeholders: Placeholder[] = [];
  let last = 0;
  // The first `}` at or after a position, found once and reused while the scan is before it.
  let brace = -1;
  for (let open = source.indexOf('{{{'); open !== -1; open = source.indexOf('{{{', open + 1)) {
    NAME.lastIndex = open + 3;
    if (!NAME.test(source)) continue;
    const nameEnd = NAME.lastIndex;
    let fallback: string | undefined;
    let close = nameEnd;
    if (source[nameEnd] === '|') {
      if (brace < nameEnd) brace = source.indexOf('}', nameEnd);
      if (brace === -1) break; // no `}` anywhere after: nothing further can close
      fallback = source.slice(nameEnd + 1, brace);
      close = brace;
    }
    if (!source.startsWith('}}}', close)) continue;
    texts.push(source.slice(last, open));
    placeholders.push({ name: source.slice(open + 3, nameEnd), fallback });
    last = close + 3;
    open = last - 1;
  }
  texts.push(source.slice(last));
  return { texts, placeholders };
}

const HTML_SPECIAL = /[&<>"']/;
const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes the five characters that matter in html text and attribute values. */
export function escapeHtml(text: string): string {
  return HTML_SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!) : text;
}

/**
 * Fills a parsed source: each placeholder takes `lookup(name)`, else its own fallback, else nothing.
 * Looked-up values are data, so they are escaped for html when `html` is set; a fallback is part of
 * the source, written by its author, and goes in as it stands.
 */
export function renderTemplate(parsed: ParsedTemplate, lookup: (name: string) => Value | undefined, html: boolean): string {
  const { texts, placeholders } = parsed;
  let out = texts[0]!;
  for (let i = 0; i < placeholders.length; i++) {
    const placeholder = placeholders[i]!;
    const value = lookup(placeholder.name);
    if (value === undefined) out += placeholder.fallback ?? '';
    else out += html ? escapeHtml(String(value)) : String(value);
    out += texts[i + 1]!;
  }
  return out;
}
