// Templates: renders/s of a typical 5 KB html template with 5 variables, beside a single-pass
// String.prototype.replace over the same text (same lookups, same escaping); then POST /emails with
// that template beside the same email with its html inline, to see what resolving a template costs a send.
import { escapeHtml, parseTemplate, renderTemplate, type Value } from '../src/domain/templates/render-template.ts';
import { postEmails, type Figure } from './delivery.ts';
import { BENCH_KEY, startMailroom } from './mailroom.ts';

const paragraph = 'We are getting your order ready and will let you know as soon as it ships. ';
const filler = Array.from({ length: 44 }, (_, i) => `<p style="margin:0 0 12px">${i}. ${paragraph}</p>`).join('\n');

/** About 5 KB of html with 5 placeholders, one in an attribute and one with a fallback. */
const templateHtml = `<html><body><h1>Thanks, {{{NAME|there}}}!</h1>
<p>Your order <b>#{{{ORDER}}}</b> of {{{PRODUCT}}} comes to {{{TOTAL}}} €.</p>
${filler}
<p><a href="{{{URL}}}">Track your order</a></p></body></html>`;

const values: Record<string, Value> = { NAME: 'Jane Doe', ORDER: 48213, PRODUCT: 'Tea & Biscuits', TOTAL: 23.5, URL: 'https://example.com/o/48213?ref=mail&x=1' };
const lookup = (name: string) => values[name];

/** Calls per second over about `ms` of work, after a warm-up; each result is read so none is skipped. */
function measure(render: () => string, ms = 1500): number {
  let checksum = 0;
  for (let i = 0; i < 5000; i++) checksum += render().length;
  let calls = 0;
  const started = performance.now();
  let elapsed = 0;
  do {
    for (let i = 0; i < 1000; i++) {
      const out = render();
      checksum += out.charCodeAt(out.length >> 1); // flattens the string, as writing it to the database would
    }
    calls += 1000;
    elapsed = performance.now() - started;
  } while (elapsed < ms);
  if (checksum < 0) console.log(checksum);
  return calls / (elapsed / 1000);
}

function benchRenderer(): Figure[] {
  const parsed = parseTemplate(templateHtml);
  const placeholder = /\{\{\{([A-Za-z0-9_]+)(?:\|([^}]*))?\}\}\}/g;
  const baseline = measure(() =>
    templateHtml.replace(placeholder, (_, name: string, fallback?: string) => {
      const value = lookup(name);
      return value === undefined ? (fallback ?? '') : escapeHtml(String(value));
    }),
  );
  const rendered = measure(() => renderTemplate(parsed, lookup, true));
  const parsedEachTime = measure(() => renderTemplate(parseTemplate(templateHtml), lookup, true));
  return [
    { name: `template size (bytes)`, value: Buffer.byteLength(templateHtml), unit: 'bytes' },
    { name: 'String.prototype.replace, one pass (baseline)', value: baseline, unit: 'renders/s' },
    { name: 'renderTemplate, parsed once', value: rendered, unit: 'renders/s' },
    { name: 'renderTemplate, parsed once / baseline', value: rendered / baseline, unit: 'ratio' },
    { name: 'parseTemplate + renderTemplate each time (as a send does)', value: parsedEachTime, unit: 'renders/s' },
  ];
}

async function benchSend(n: number): Promise<Figure[]> {
  const mailroom = await startMailroom({ role: 'api' });
  try {
    const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
    const template = { name: 'receipt', alias: 'receipt', html: templateHtml, subject: 'Order #{{{ORDER}}}', from: 'Acme <orders@example.com>' };
    const { id } = (await (await fetch(`${mailroom.url}/templates`, { method: 'POST', headers, body: JSON.stringify(template) })).json()) as { id: string };
    await fetch(`${mailroom.url}/templates/${id}/publish`, { method: 'POST', headers });
    const inline = (i: number) => ({
      from: template.from,
      to: `customer${i}@example.com`,
      subject: `Order #${i}`,
      html: renderTemplate(parseTemplate(templateHtml), (name) => (name === 'ORDER' ? i : values[name]), true),
    });
    const templated = (i: number) => ({ to: `customer${i}@example.com`, template: { id: 'receipt', variables: { ...values, ORDER: i } } });
    await postEmails(mailroom.url, 500, 32, inline); // warm-up
    await postEmails(mailroom.url, 500, 32, templated);
    const inlineRate = await postEmails(mailroom.url, n, 32, inline);
    const templatedRate = await postEmails(mailroom.url, n, 32, templated);
    return [
      { name: 'POST /emails with the html inline (baseline)', value: inlineRate, unit: 'emails/s' },
      { name: 'POST /emails with template {id: alias, variables}', value: templatedRate, unit: 'emails/s' },
      { name: 'with template / baseline', value: templatedRate / inlineRate, unit: 'ratio' },
    ];
  } finally {
    await mailroom.stop();
  }
}

export async function benchTemplates(options: { n: number }): Promise<Figure[]> {
  return [...benchRenderer(), ...(await benchSend(options.n))];
}
