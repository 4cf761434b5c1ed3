import type { Context } from '../../context.ts';
import { AppError, clip } from '../../errors.ts';
import type { SendEmailInput } from '../emails/email-input.ts';
import { findPublishedTemplate, type TemplateVariable } from '../../store/templates.ts';
import { MAX_RENDERED_LENGTH, parseTemplate, renderTemplate, type ParsedTemplate, type Value } from './render-template.ts';
import { checkVariableKey, checkVariableValue } from './template-variables.ts';

/** A send payload with its template applied, and the id of that template. */
export interface TemplatedInput {
  input: SendEmailInput;
  templateId: string;
}

function supplied(variables: Record<string, unknown>, declared: Map<string, TemplateVariable>): Map<string, Value> {
  const values = new Map<string, Value>();
  for (const [key, value] of Object.entries(variables)) {
    const field = `template.variables.${key}`;
    checkVariableKey(key, field);
    values.set(key, checkVariableValue(value, field, declared.get(key)?.type));
  }
  return values;
}

/** The first placeholder that has no value, no declared fallback and no fallback of its own. */
function firstMissing(parts: ParsedTemplate[], lookup: (name: string) => Value | undefined): string | undefined {
  for (const part of parts) {
    const missing = part.placeholders.find((p) => p.fallback === undefined && lookup(p.name) === undefined);
    if (missing) return missing.name;
  }
  return undefined;
}

/**
 * Resolves `template` on a send payload: the published version of the project's template named by id or alias,
 * parsed now and rendered with the payload's variables (then the declared fallbacks, then the
 * placeholders' own). The payload's from, subject and reply_to win over the template's. Without a
 * text in the template, text stays absent and is generated from the rendered html at delivery.
 */
export async function applyTemplate(
  ctx: Context,
  project: string,
  input: SendEmailInput,
  template: NonNullable<SendEmailInput['template']>,
): Promise<TemplatedInput> {
  if (input.html !== undefined || input.text !== undefined) {
    throw new AppError('validation_error', 'The `html` and `text` fields cannot be used together with `template`: the template gives them.');
  }
  const found = await findPublishedTemplate(ctx.db, project, template.id);
  if (!found) throw new AppError('validation_error', `Template \`${clip(template.id)}\` not found.`);
  const version = found.version;
  if (!version) throw new AppError('validation_error', `Template \`${clip(template.id)}\` is not published; publish it before sending with it.`);

  const declared = new Map(version.variables.map((v) => [v.key, v]));
  const values = supplied(template.variables ?? {}, declared);
  const lookup = (name: string) => values.get(name) ?? declared.get(name)?.fallback_value ?? undefined;

  const html = parseTemplate(version.html);
  const text = version.text === null ? undefined : parseTemplate(version.text);
  const subject = input.subject === undefined && version.subject !== null ? parseTemplate(version.subject) : undefined;
  const missing = firstMissing([html, text, subject].filter((part) => part !== undefined), lookup);
  if (missing !== undefined) {
    throw new AppError(
      'validation_error',
      `Missing value for the template variable \`${missing}\`: supply it in \`template.variables\` or declare a fallback_value.`,
    );
  }
  return {
    templateId: found.templateId,
    input: {
      ...input,
      from: input.from ?? version.from ?? undefined,
      subject: subject ? renderPart(subject, lookup, false) : input.subject,
      reply_to: input.reply_to ?? version.reply_to ?? undefined,
      html: renderPart(html, lookup, true),
      text: text && renderPart(text, lookup, false),
    },
  };
}

/** Renders a part, refusing one that the variables would make larger than MAX_RENDERED_LENGTH. */
export function renderPart(parsed: ParsedTemplate, lookup: (name: string) => Value | undefined, html: boolean): string {
  const out = renderTemplate(parsed, lookup, html);
  if (out.length > MAX_RENDERED_LENGTH) {
    throw new AppError('validation_error', `The rendered template is larger than ${MAX_RENDERED_LENGTH / 1024 / 1024} MB; send smaller variable values.`);
  }
  return out;
}
