import { invalidField, quoted } from '../../errors.ts';
import { newId } from '../../time/ids.ts';
import type { TemplateVariable } from '../../store/templates.ts';
import type { Value } from './render-template.ts';

export const MAX_VARIABLES = 50;
const MAX_STRING = 2000;
const KEY = /^[A-Za-z0-9_]{1,50}$/;
// Names broadcasts fill from the contact (and `contact.*`, `this`): a template may not declare or take them.
const RESERVED = new Set(['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'contact', 'this']);

export type VariableType = 'string' | 'number';

export interface VariableInput {
  key: string;
  type: string;
  fallback_value?: Value | null;
}

/** A key is ASCII letters, digits and `_`, at most 50 characters, and not a reserved name. */
export function checkVariableKey(key: string, field: string): void {
  if (!KEY.test(key)) throw invalidField(field, `${quoted(key)} is not a valid variable key; use ASCII letters, digits and "_", at most 50 characters.`);
  if (RESERVED.has(key)) throw invalidField(field, `${quoted(key)} is a reserved name (${[...RESERVED].join(', ')}).`);
}

/**
 * A value is a string of at most 2,000 characters or a number of at most 2^53 - 1 in size; a variable
 * declared with a type takes only values of that type.
 */
export function checkVariableValue(value: unknown, field: string, type: VariableType | undefined): Value {
  if (typeof value === 'string') {
    if (type === 'number') throw invalidField(field, 'expected a number: the variable is declared as a number.');
    if (value.length > MAX_STRING) throw invalidField(field, `a string value is at most ${MAX_STRING} characters.`);
    return value;
  }
  if (typeof value === 'number') {
    if (type === 'string') throw invalidField(field, 'expected a string: the variable is declared as a string.');
    if (!(Math.abs(value) <= Number.MAX_SAFE_INTEGER)) throw invalidField(field, 'a number value is at most 2^53 - 1 in size.');
    return value;
  }
  throw invalidField(field, 'expected a string or a number.');
}

/**
 * Checks a template's declared variables (at most 50, keys unique) and gives each an id. A key that
 * `previous` already declared keeps its id and creation time, and its update time when unchanged.
 */
export function declareVariables(inputs: VariableInput[], previous: TemplateVariable[], now: string): TemplateVariable[] {
  if (inputs.length > MAX_VARIABLES) throw invalidField('variables', `a template has at most ${MAX_VARIABLES} variables.`);
  const before = new Map(previous.map((v) => [v.key, v]));
  const seen = new Set<string>();
  return inputs.map((input, i) => {
    checkVariableKey(input.key, `variables[${i}].key`);
    if (seen.has(input.key)) throw invalidField(`variables[${i}].key`, `${quoted(input.key)} is declared twice.`);
    seen.add(input.key);
    if (input.type !== 'string' && input.type !== 'number') {
      throw invalidField(`variables[${i}].type`, 'must be "string" or "number".');
    }
    const fallback = input.fallback_value ?? null;
    if (fallback !== null) checkVariableValue(fallback, `variables[${i}].fallback_value`, input.type);
    const old = before.get(input.key);
    const unchanged = old !== undefined && old.type === input.type && old.fallback_value === fallback;
    return {
      id: old?.id ?? newId(),
      key: input.key,
      type: input.type,
      fallback_value: fallback,
      created_at: old?.created_at ?? now,
      updated_at: unchanged ? old.updated_at : now,
    };
  });
}
