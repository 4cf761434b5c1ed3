import { escapeHtml } from '../domain/templates/render-template.ts';

// Pages are written as `html` template literals: every interpolated value is escaped unless it is
// html already (another `html` fragment, or a list of them). Nothing the user or a message gave
// reaches a page unescaped.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** An html fragment: the literal's text as written, its values escaped. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += render(values[i]) + strings[i + 1]!;
  return new Html(text);
}
