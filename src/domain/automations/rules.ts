// The rule trees of condition steps and of wait_for_event filters: `rule` compares one field with a
// value; `and` and `or` combine rules. A field is `event.<key>` (the event's payload; dots reach into
// nested objects) or `contact.<field>`: email, first_name, last_name, unsubscribed, id, or a property's
// key (also as `contact.properties.<key>`).

export type Rule =
  | { type: 'rule'; field: string; operator: Operator; value?: string | number | boolean | null }
  | { type: 'and'; rules: Rule[] }
  | { type: 'or'; rules: Rule[] };

const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with', 'exists', 'is_empty'] as const;
type Operator = (typeof OPERATORS)[number];

const MAX_DEPTH = 5;
const MAX_RULES = 50;

/** What fields read: the event's payload and the contact, as plain values. */
export interface RuleScope {
  event: Record<string, unknown>;
  contact: Record<string, unknown> | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a rule tree; returns what is wrong (naming the place in the tree, from `at`), or undefined
 * when it is valid.
 */
export function ruleProblem(value: unknown, at: string, depth = 0): string | undefined {
  if (!isObject(value)) return `${at} must be an object with a \`type\` of "rule", "and" or "or".`;
  if (depth > MAX_DEPTH) return `${at} nests rules deeper than ${MAX_DEPTH} levels.`;
  if (value.type === 'and' || value.type === 'or') {
    if (!Array.isArray(value.rules) || value.rules.length === 0) return `${at}.rules must be a non-empty array.`;
    if (value.rules.length > MAX_RULES) return `${at}.rules has more than ${MAX_RULES} rules.`;
    for (const [i, rule] of value.rules.entries()) {
      const problem = ruleProblem(rule, `${at}.rules[${i}]`, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  if (value.type !== 'rule') return `${at}.type must be "rule", "and" or "or".`;
  if (typeof value.field !== 'string' || !/^(event|contact)\.[^.\s]+(\.[^.\s]+)*$/.test(value.field)) {
    return `${at}.field must start with \`event.\` or \`contact.\` (e.g. event.plan, contact.email).`;
  }
  if (!OPERATORS.includes(value.operator as Operator)) return `${at}.operator must be one of ${OPERATORS.join(', ')}.`;
  const operator = value.operator as Operator;
  if (operator === 'exists' || operator === 'is_empty') return undefined;
  const v = value.value;
  if (['gt', 'gte', 'lt', 'lte'].includes(operator) && typeof v !== 'number' && !(typeof v === 'string' && !Number.isNaN(Date.parse(v)))) {
    return `${at}.value must be a number (or a date) for \`${operator}\`.`;
  }
  if (['contains', 'starts_with', 'ends_with'].includes(operator) && typeof v !== 'string') return `${at}.value must be a string for \`${operator}\`.`;
  if (!(v === null || ['string', 'number', 'boolean'].includes(typeof v))) return `${at}.value must be a string, number, boolean or null.`;
  return undefined;
}

/** The value a field names in `scope`; undefined when absent. */
export function fieldValue(scope: RuleScope, field: string): unknown {
  const [namespace, ...path] = field.split('.');
  if (namespace === 'contact') {
    if (!scope.contact) return undefined;
    if (path[0] === 'properties' && path.length > 1) path.shift();
    return path.length === 1 ? scope.contact[path[0]!] : undefined;
  }
  let value: unknown = scope.event;
  for (const part of path) value = isObject(value) ? value[part] : undefined;
  return value;
}

const toNumber = (value: unknown): number => {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') return Number.isNaN(Number(value)) ? Date.parse(value) : Number(value);
  return Number.NaN;
};

/** A field's value as text: an object or a list as its JSON, never "[object Object]". */
export const textOf = (value: unknown): string => (typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

function equal(actual: unknown, expected: unknown): boolean {
  if (expected === null) return actual === null || actual === undefined;
  if (actual === null || actual === undefined) return false;
  if (typeof expected === 'number') return toNumber(actual) === expected;
  return textOf(actual) === textOf(expected);
}

function compare(actual: unknown, expected: unknown, test: (a: number, b: number) => boolean): boolean {
  const a = toNumber(actual);
  const b = toNumber(expected);
  return !Number.isNaN(a) && !Number.isNaN(b) && test(a, b);
}

/** Whether `rule` holds in `scope`. A comparison with an absent field is false (and `neq` true). */
export function evaluate(rule: Rule, scope: RuleScope): boolean {
  if (rule.type === 'and') return rule.rules.every((r) => evaluate(r, scope));
  if (rule.type === 'or') return rule.rules.some((r) => evaluate(r, scope));
  return holds(rule, scope);
}

function holds(rule: Extract<Rule, { type: 'rule' }>, scope: RuleScope): boolean {
  const actual = fieldValue(scope, rule.field);
  const text = actual === undefined || actual === null ? undefined : textOf(actual);
  switch (rule.operator) {
    case 'eq': return equal(actual, rule.value);
    case 'neq': return !equal(actual, rule.value);
    case 'gt': return compare(actual, rule.value, (a, b) => a > b);
    case 'gte': return compare(actual, rule.value, (a, b) => a >= b);
    case 'lt': return compare(actual, rule.value, (a, b) => a < b);
    case 'lte': return compare(actual, rule.value, (a, b) => a <= b);
    case 'contains': return text !== undefined && text.includes(String(rule.value));
    case 'starts_with': return text !== undefined && text.startsWith(String(rule.value));
    case 'ends_with': return text !== undefined && text.endsWith(String(rule.value));
    case 'exists': return actual !== undefined && actual !== null;
    case 'is_empty': return text === undefined || text === '';
  }
}
