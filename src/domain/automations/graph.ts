// An automation's graph: its steps (each with a unique key, a type and that type's config) and the
// connections between them. `checkGraph` is every rule a graph must meet before it is stored; each
// refusal is a 422 naming the offending step (or connection).
import { AppError, clip } from '../../errors.ts';
import { parseDuration } from '../../time/durations.ts';
import { ruleProblem, type Rule } from './rules.ts';

export const STEP_TYPES = ['trigger', 'send_email', 'delay', 'wait_for_event', 'condition', 'contact_update', 'contact_delete', 'add_to_segment'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const CONNECTION_TYPES = ['default', 'condition_met', 'condition_not_met', 'timeout', 'event_received'] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];

/** A template variable's value: a literal, or `{var: 'event.x' | 'contact.x'}`, read when the step runs. */
export type VariableValue = string | number | boolean | { var: string };

export interface SendEmailConfig {
  template: { id: string; variables?: Record<string, VariableValue> };
  subject?: string;
  from?: string;
  reply_to?: string | string[];
  topic_id?: string;
}

export interface ContactUpdateConfig {
  first_name?: string | null | { var: string };
  last_name?: string | null | { var: string };
  unsubscribed?: boolean | { var: string };
  properties?: Record<string, string | number | boolean | null | { var: string }>;
}

export type Step =
  | { key: string; type: 'trigger'; config: { event_name: string } }
  | { key: string; type: 'send_email'; config: SendEmailConfig }
  | { key: string; type: 'delay'; config: { duration: string } }
  | { key: string; type: 'wait_for_event'; config: { event_name: string; timeout?: string; filter_rule?: Rule } }
  | { key: string; type: 'condition'; config: Rule }
  | { key: string; type: 'contact_update'; config: ContactUpdateConfig }
  | { key: string; type: 'contact_delete'; config: Record<string, never> }
  | { key: string; type: 'add_to_segment'; config: { segment_id: string } };

export interface Connection {
  from: string;
  to: string;
  type: ConnectionType;
}

export interface Graph {
  steps: Step[];
  connections: Connection[];
}

export const MAX_STEPS = 150;
/** The longest a delay or a wait may hold a run. */
export const MAX_WAIT_MS = 30 * 86_400_000;
const MAX_KEY = 100;

/** The connections a step of each type may start. */
const OUTGOING: Record<StepType, readonly ConnectionType[]> = {
  trigger: ['default'],
  send_email: ['default'],
  delay: ['default'],
  wait_for_event: ['event_received', 'timeout'],
  condition: ['condition_met', 'condition_not_met'],
  contact_update: ['default'],
  contact_delete: ['default'],
  add_to_segment: ['default'],
};

/** A reserved event name: Resend keeps the `resend:` prefix for its own events. */
export const isReservedEventName = (name: string) => name.toLowerCase().startsWith('resend:');

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isVar = (value: unknown): value is { var: string } =>
  isObject(value) && Object.keys(value).length === 1 && typeof value.var === 'string' && /^(event|contact)\.\S+$/.test(value.var);

function stepError(key: string, why: string): AppError {
  return new AppError('validation_error', `Invalid step \`${key}\`: ${why}`);
}

function checkEventName(value: unknown, key: string, field: string): void {
  if (typeof value !== 'string' || value.trim() === '') throw stepError(key, `\`config.${field}\` is required: the name of an event.`);
  if (isReservedEventName(value)) throw stepError(key, `\`config.${field}\` cannot start with \`resend:\`, which is reserved.`);
}

function checkDuration(value: unknown, key: string, field: string): void {
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined) throw stepError(key, `\`config.${field}\` must be a duration such as "30 minutes", "1 hour" or "3 days".`);
  if (ms > MAX_WAIT_MS) throw stepError(key, `\`config.${field}\` is at most 30 days.`);
}

function checkOptionalString(config: Record<string, unknown>, field: string, key: string): void {
  if (config[field] !== undefined && typeof config[field] !== 'string') throw stepError(key, `\`config.${field}\` must be a string.`);
}

function checkSendEmail(config: Record<string, unknown>, key: string): void {
  const template = config.template;
  if (!isObject(template) || typeof template.id !== 'string' || template.id === '') throw stepError(key, '`config.template.id` is required: a published template\'s id or alias.');
  if (template.variables !== undefined) {
    if (!isObject(template.variables)) throw stepError(key, '`config.template.variables` must be an object.');
    for (const [name, value] of Object.entries(template.variables)) {
      if (!(['string', 'number', 'boolean'].includes(typeof value) || isVar(value))) {
        throw stepError(key, `\`config.template.variables.${clip(name)}\` must be a string, a number, a boolean or {"var": "event.<key>" | "contact.<field>"}.`);
      }
    }
  }
  for (const field of ['subject', 'from', 'topic_id']) checkOptionalString(config, field, key);
  const replyTo = config.reply_to;
  if (replyTo !== undefined && typeof replyTo !== 'string' && !(Array.isArray(replyTo) && replyTo.every((r) => typeof r === 'string'))) {
    throw stepError(key, '`config.reply_to` must be a string or an array of strings.');
  }
}

function checkContactUpdate(config: Record<string, unknown>, key: string): void {
  for (const field of ['first_name', 'last_name']) {
    const value = config[field];
    if (value !== undefined && value !== null && typeof value !== 'string' && !isVar(value)) throw stepError(key, `\`config.${field}\` must be a string, null or {"var": ...}.`);
  }
  if (config.unsubscribed !== undefined && typeof config.unsubscribed !== 'boolean' && !isVar(config.unsubscribed)) {
    throw stepError(key, '`config.unsubscribed` must be a boolean or {"var": ...}.');
  }
  if (config.properties !== undefined) {
    if (!isObject(config.properties)) throw stepError(key, '`config.properties` must be an object.');
    for (const [name, value] of Object.entries(config.properties)) {
      if (!(value === null || ['string', 'number', 'boolean'].includes(typeof value) || isVar(value))) {
        throw stepError(key, `\`config.properties.${clip(name)}\` must be a string, a number, a boolean, null or {"var": ...}.`);
      }
    }
  }
  if (['first_name', 'last_name', 'unsubscribed', 'properties'].every((field) => config[field] === undefined)) {
    throw stepError(key, 'give at least one of `first_name`, `last_name`, `unsubscribed` or `properties`.');
  }
}

/** The rules on one step's config, by its type. */
function checkConfig(step: Step): void {
  const config = step.config as Record<string, unknown>;
  const { key } = step;
  switch (step.type) {
    case 'trigger':
      return checkEventName(config.event_name, key, 'event_name');
    case 'send_email':
      return checkSendEmail(config, key);
    case 'delay':
      return checkDuration(config.duration, key, 'duration');
    case 'wait_for_event': {
      checkEventName(config.event_name, key, 'event_name');
      if (config.timeout !== undefined) checkDuration(config.timeout, key, 'timeout');
      const problem = config.filter_rule === undefined ? undefined : ruleProblem(config.filter_rule, '`config.filter_rule`');
      if (problem) throw stepError(key, problem);
      return;
    }
    case 'condition': {
      const problem = ruleProblem(config, '`config`');
      if (problem) throw stepError(key, problem);
      return;
    }
    case 'contact_update':
      return checkContactUpdate(config, key);
    case 'contact_delete':
      return;
    case 'add_to_segment':
      if (typeof config.segment_id !== 'string' || config.segment_id === '') throw stepError(key, '`config.segment_id` is required.');
  }
}

/** The steps of the graph reached from `start`, following every connection. */
function reachable(start: string, connections: Connection[]): Set<string> {
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const key = queue.shift()!;
    for (const c of connections) {
      if (c.from === key && !seen.has(c.to)) {
        seen.add(c.to);
        queue.push(c.to);
      }
    }
  }
  return seen;
}

/** A step on a cycle that no delay or wait breaks (a run would loop at once, for ever); undefined if none. */
function instantCycle(steps: Step[], connections: Connection[]): string | undefined {
  const holds = new Set(steps.filter((s) => s.type === 'delay' || s.type === 'wait_for_event').map((s) => s.key));
  const next = new Map<string, string[]>();
  for (const c of connections) if (!holds.has(c.from) && !holds.has(c.to)) next.set(c.from, [...(next.get(c.from) ?? []), c.to]);
  const state = new Map<string, 'open' | 'done'>();
  const visit = (key: string): string | undefined => {
    if (state.get(key) === 'done') return undefined;
    if (state.get(key) === 'open') return key;
    state.set(key, 'open');
    for (const to of next.get(key) ?? []) {
      const found = visit(to);
      if (found) return found;
    }
    state.set(key, 'done');
    return undefined;
  };
  for (const step of steps) {
    const found = visit(step.key);
    if (found) return found;
  }
  return undefined;
}

/**
 * Reads and checks a graph as the API takes it: every step's key unique and its config valid for its
 * type, exactly one trigger, every connection between existing steps and of a type its first step
 * starts, none into the trigger, every step reachable from the trigger, and no cycle without a delay
 * or a wait. Returns it with each connection's type filled in.
 */
export function checkGraph(stepsInput: unknown, connectionsInput: unknown): Graph {
  if (!Array.isArray(stepsInput) || stepsInput.length === 0) throw new AppError('validation_error', 'Invalid `steps` field: at least one step (a trigger) is required.');
  if (stepsInput.length > MAX_STEPS) throw new AppError('validation_error', `Invalid \`steps\` field: at most ${MAX_STEPS} steps.`);
  if (!Array.isArray(connectionsInput)) throw new AppError('validation_error', 'Invalid `connections` field: an array is required.');
  const keys = new Set<string>();
  const steps = stepsInput.map((input: unknown, i): Step => {
    if (!isObject(input) || typeof input.key !== 'string' || input.key === '' || input.key.length > MAX_KEY) {
      throw new AppError('validation_error', `Invalid \`steps[${i}]\`: each step needs a \`key\` of 1 to ${MAX_KEY} characters.`);
    }
    const key = input.key;
    if (keys.has(key)) throw stepError(key, 'another step has the same key; keys are unique.');
    keys.add(key);
    if (!STEP_TYPES.includes(input.type as StepType)) throw stepError(key, `\`type\` must be one of ${STEP_TYPES.join(', ')}.`);
    const config = input.config ?? {};
    if (!isObject(config)) throw stepError(key, '`config` must be an object.');
    const step = { key, type: input.type, config } as Step;
    checkConfig(step);
    return step;
  });
  const triggers = steps.filter((s) => s.type === 'trigger');
  if (triggers.length !== 1) {
    throw new AppError('validation_error', `Invalid \`steps\` field: an automation has exactly one \`trigger\` step (found ${triggers.length}${triggers.length > 1 ? `: ${clip(triggers.map((t) => t.key).join(', '))}` : ''}).`);
  }
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const seen = new Set<string>();
  const connections = connectionsInput.map((input: unknown, i): Connection => {
    const at = `connections[${i}]`;
    if (!isObject(input) || typeof input.from !== 'string' || typeof input.to !== 'string') {
      throw new AppError('validation_error', `Invalid \`${at}\`: \`from\` and \`to\` are required: the keys of two steps.`);
    }
    const from = byKey.get(input.from);
    if (!from) throw new AppError('validation_error', `Invalid \`${at}\`: no step has the key \`${clip(input.from)}\` (from).`);
    const to = byKey.get(input.to);
    if (!to) throw new AppError('validation_error', `Invalid \`${at}\`: no step has the key \`${clip(input.to)}\` (to).`);
    const type = (input.type ?? 'default') as ConnectionType;
    if (!CONNECTION_TYPES.includes(type)) throw new AppError('validation_error', `Invalid \`${at}\`: \`type\` must be one of ${CONNECTION_TYPES.join(', ')}.`);
    if (!OUTGOING[from.type].includes(type)) {
      throw stepError(from.key, `a \`${from.type}\` step's connections are of type ${OUTGOING[from.type].join(' or ')}, not \`${type}\` (${at}).`);
    }
    if (to.type === 'trigger') throw stepError(to.key, `the trigger starts the automation; no connection leads to it (${at}).`);
    const id = `${from.key}\n${to.key}\n${type}`;
    if (seen.has(id)) throw new AppError('validation_error', `Invalid \`${at}\`: the same connection is given twice.`);
    seen.add(id);
    return { from: from.key, to: to.key, type };
  });
  const reached = reachable(triggers[0]!.key, connections);
  const stray = steps.find((s) => !reached.has(s.key));
  if (stray) throw stepError(stray.key, 'no connection leads to it from the trigger.');
  const looping = instantCycle(steps, connections);
  if (looping) throw stepError(looping, 'it is on a cycle with no `delay` or `wait_for_event` step, which would loop for ever.');
  return { steps, connections };
}

/** The trigger's event name: what starts a run of this graph. */
export function triggerEvent(graph: Graph): string {
  const trigger = graph.steps.find((s) => s.type === 'trigger')!;
  return (trigger.config).event_name;
}
