import { CONNECTION_TYPES, type Graph, type Step } from '../../domain/automations/graph.ts';
import type { Rule } from '../../domain/automations/rules.ts';
import { layoutGraph } from '../graph-layout.ts';
import { html, type Html } from '../html.ts';

// An automation's graph, drawn on the server as inline SVG (no script: the Content-Security-Policy has
// none to give): a box per step with its key, type and what it does, an arrow per connection labelled
// with its type. The steps' table after it says the same in words.

const BOX = { nodeWidth: 210, nodeHeight: 60, layerGap: 64, nodeGap: 44, margin: 16, labelRoom: 120 };
/** Characters that fit a box's line at its font size; longer text ends in an ellipsis (the whole is in the box's title and the table). */
const KEY_CHARS = 24;
const SUMMARY_CHARS = 30;

const OPERATORS: Record<string, string> = {
  eq: '=',
  neq: '≠',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  contains: 'contains',
  starts_with: 'starts with',
  ends_with: 'ends with',
  exists: 'exists',
  is_empty: 'is empty',
};

/** A rule tree in one line: `contact.plan = "pro" and (event.a > 1 or event.b exists)`. */
export function ruleText(rule: Rule): string {
  if (rule.type === 'rule') {
    const value = rule.operator === 'exists' || rule.operator === 'is_empty' ? '' : ` ${JSON.stringify(rule.value ?? null)}`;
    return `${rule.field} ${OPERATORS[rule.operator] ?? rule.operator}${value}`;
  }
  return rule.rules.map((r) => (r.type === 'rule' ? ruleText(r) : `(${ruleText(r)})`)).join(` ${rule.type} `);
}

/** The names of the templates and segments steps refer to, by `template:<id or alias>` and `segment:<id>`. */
export type ReferenceNames = Map<string, string>;

/** What a step does, in one line; a template or segment by its name when `names` has it. */
export function stepSummary(step: Step, names: ReferenceNames = new Map()): string {
  const named = (kind: string, id: string) => {
    const name = names.get(`${kind}:${id}`);
    return name === undefined ? `${kind} ${id}` : `${kind} "${name}"`;
  };
  switch (step.type) {
    case 'trigger':
      return `on event ${step.config.event_name}`;
    case 'send_email':
      return `${named('template', step.config.template.id)}${step.config.subject ? `, subject "${step.config.subject}"` : ''}`;
    case 'delay':
      return `for ${step.config.duration}`;
    case 'wait_for_event': {
      const { event_name, timeout, filter_rule } = step.config;
      return `for event ${event_name}${timeout ? `, timeout ${timeout}` : ''}${filter_rule ? `, if ${ruleText(filter_rule)}` : ''}`;
    }
    case 'condition':
      return `if ${ruleText(step.config)}`;
    case 'contact_update': {
      const { properties, ...fields } = step.config;
      const names = [...Object.keys(fields), ...Object.keys(properties ?? {}).map((key) => `properties.${key}`)];
      return `set ${names.join(', ')}`;
    }
    case 'contact_delete':
      return 'delete the contact';
    case 'add_to_segment':
      return named('segment', step.config.segment_id);
  }
}

const clip = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

/** The graph as an SVG picture, its title naming what it shows. */
export function graphDrawing(name: string, graph: Graph, names: ReferenceNames): Html {
  const trigger = graph.steps.find((s) => s.type === 'trigger')!;
  const layout = layoutGraph(
    graph.steps.map((s) => s.key),
    graph.connections,
    trigger.key,
    BOX,
  );
  const markers = CONNECTION_TYPES.map(
    (type) => html`<marker id="arrow-${type}" class="arrow arrow-${type}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`,
  );
  const steps = graph.steps.map((step) => {
    const at = layout.nodes.get(step.key)!;
    const summary = stepSummary(step, names);
    return html`<g class="step step-${step.type}" data-key="${step.key}" transform="translate(${at.x},${at.y})">
<title>${step.key} (${step.type}): ${summary}</title>
<rect width="${BOX.nodeWidth}" height="${BOX.nodeHeight}" rx="6"/>
<text class="step-key" x="10" y="19">${clip(step.key, KEY_CHARS)}</text>
<text class="step-type" x="10" y="35">${step.type}</text>
<text class="step-summary" x="10" y="51">${clip(summary, SUMMARY_CHARS)}</text>
</g>`;
  });
  const connections = graph.connections.map((c, i) => {
    const placed = layout.edges[i]!;
    return html`<g class="connection connection-${c.type}${placed.back ? ' back' : ''}" data-from="${c.from}" data-to="${c.to}" data-type="${c.type}">
<path d="${placed.path}" marker-end="url(#arrow-${c.type})"/>
<text x="${placed.label.x}" y="${placed.label.y + 4}"${placed.back && c.from === c.to ? '' : html` text-anchor="middle"`}>${c.type}</text>
</g>`;
  });
  return html`<div class="graph"><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="graph-title" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}">
<title id="graph-title">The steps of ${name}: ${graph.steps.length} steps, ${graph.connections.length} connections</title>
<defs>${markers}</defs>
${connections}
${steps}
</svg></div>`;
}

/** The steps in a table: each with what it does, its config, and where it leads. */
export function stepsTable(graph: Graph, names: ReferenceNames): Html {
  const rows = graph.steps.map((step) => {
    const out = graph.connections.filter((c) => c.from === step.key);
    return html`<tr>
<th scope="row"><code>${step.key}</code></th>
<td>${step.type}</td>
<td>${stepSummary(step, names)}${Object.keys(step.config).length ? html`<details><summary>Config</summary><pre>${JSON.stringify(step.config, null, 2)}</pre></details>` : ''}</td>
<td>${out.length ? html`<ul class="next">${out.map((c) => html`<li><code>${c.to}</code> <span class="tag">${c.type}</span></li>`)}</ul>` : 'end'}</td>
</tr>`;
  });
  return html`<table class="list steps">
<caption class="visually-hidden">Steps and where each leads</caption>
<thead><tr><th scope="col">Step</th><th scope="col">Type</th><th scope="col">What it does</th><th scope="col">Next</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}
