import { invalidField, quoted } from '../../errors.ts';
import { isUuid } from '../../time/ids.ts';
import type { VersionRow } from '../../store/templates.ts';
import { formatMailbox, parseMailbox, parseMailboxList } from '../recipients/addresses.ts';
import { MAX_PLACEHOLDERS, parseTemplate } from './render-template.ts';
import { declareVariables, type VariableInput } from './template-variables.ts';

/** The body of POST /templates and PATCH /templates/:id; null clears an optional field on update. */
export interface TemplateInput {
  name?: string;
  alias?: string | null;
  from?: string | null;
  subject?: string | null;
  reply_to?: string | string[] | null;
  html?: string;
  text?: string | null;
  variables?: VariableInput[];
}

/** What a version holds: everything sending reads. */
export type VersionContent = Omit<VersionRow, 'id' | 'template_id' | 'created_at'>;

const CONTENT_FIELDS = ['from', 'subject', 'reply_to', 'html', 'text', 'variables'] as const;

// Aliases appear in URL paths (the SDK puts them there as they are) and must never pass for an id.
const ALIAS = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

/** Whether the input changes a version's content, rather than only the template's name or alias. */
export function changesContent(input: TemplateInput): boolean {
  return CONTENT_FIELDS.some((field) => input[field] !== undefined);
}

/** A name is any text that is not blank. */
export function checkName(name: string): string {
  if (name.trim() === '') throw invalidField('name', 'must not be empty.');
  return name;
}

/** An alias is URL-path safe and never shaped like an id; null means none. */
export function checkAlias(alias: string | null): string | null {
  if (alias === null) return null;
  if (!ALIAS.test(alias) || isUuid(alias)) {
    throw invalidField('alias', `${quoted(alias)} is not a valid alias; use up to 100 ASCII letters, digits, "_", "-" and "." (not first), and not the shape of an id.`);
  }
  return alias;
}

/** A source (html, text, subject) holds at most MAX_PLACEHOLDERS placeholders; returns it as given. */
export function checkPlaceholders(source: string, field: string): string {
  if (parseTemplate(source).placeholders.length > MAX_PLACEHOLDERS) {
    throw invalidField(field, `a template holds at most ${MAX_PLACEHOLDERS} placeholders.`);
  }
  return source;
}

/** Reply-to addresses, checked, as a template version or a broadcast keeps them; null for none. */
export function checkReplyTo(value: string | string[]): string[] | null {
  const list = parseMailboxList(value, 'reply_to');
  return list.length === 0 ? null : list.map(formatMailbox);
}

/** An optional field: absent keeps the old value, null clears it, anything else is checked. */
function pick<T, R>(value: T | null | undefined, check: (value: T) => R | null, old: R | null | undefined): R | null {
  if (value === undefined) return old ?? null;
  return value === null ? null : check(value);
}

/**
 * The content of a version: the fields the input gives, checked, over those of `base` (the version
 * being edited), or over nothing for a new template.
 */
export function versionContent(input: TemplateInput, base: VersionRow | undefined, now: string): VersionContent {
  if (input.html !== undefined && input.html.trim() === '') throw invalidField('html', 'must not be empty.');
  const previous = base?.variables ?? [];
  return {
    from: pick(input.from, (from) => formatMailbox(parseMailbox(from, 'from')), base?.from),
    subject: pick(input.subject, (subject) => checkPlaceholders(subject, 'subject'), base?.subject),
    reply_to: pick(input.reply_to, checkReplyTo, base?.reply_to),
    html: input.html === undefined ? base!.html : checkPlaceholders(input.html, 'html'),
    text: pick(input.text, (text) => checkPlaceholders(text, 'text'), base?.text),
    variables: input.variables ? declareVariables(input.variables, previous, now) : previous,
  };
}
