import type { Context } from '../../context.ts';
import { renderPart } from './apply-template.ts';
import { parseTemplate, type Value } from './render-template.ts';
import { checkVariableValue } from './template-variables.ts';
import { getTemplate } from './templates.ts';

/** A parsed source whose placeholders without a fallback show their own name (letters, digits, `_` and `.`: safe in html). */
const sampled = (source: string) => {
  const parsed = parseTemplate(source);
  return { ...parsed, placeholders: parsed.placeholders.map((p) => ({ ...p, fallback: p.fallback ?? p.name })) };
};

type Template = Awaited<ReturnType<typeof getTemplate>>;

/**
 * A template's current version rendered as sending renders it (the same renderer, escaping and size
 * limit), with sample values: those given for its declared variables, else their fallbacks, else the
 * placeholder's own fallback, else the variable's name, so that every placeholder shows.
 */
export function renderPreview(template: Pick<Template, 'variables' | 'subject' | 'html' | 'text'>, samples: Record<string, string>) {
  const declared = new Map(template.variables.map((v) => [v.key, v]));
  const values = new Map<string, Value>();
  for (const [key, value] of Object.entries(samples)) {
    if (value !== '' && declared.has(key)) values.set(key, checkVariableValue(value, key, undefined));
  }
  const lookup = (name: string) => values.get(name) ?? declared.get(name)?.fallback_value ?? undefined;
  return {
    subject: template.subject === null ? null : renderPart(sampled(template.subject), lookup, false),
    html: renderPart(sampled(template.html), lookup, true),
    text: template.text === null ? null : renderPart(sampled(template.text), lookup, false),
  };
}

/** The preview of the project's template named by id or alias (renderPreview). */
export async function previewTemplate(ctx: Context, project: string, idOrAlias: string, samples: Record<string, string>) {
  return renderPreview(await getTemplate(ctx, project, idOrAlias), samples);
}
