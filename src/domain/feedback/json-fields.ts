import { AppError } from '../../errors.ts';

// Reading a provider's post, whose shape nothing promises: each field is looked at for what it is,
// and a field of another type reads as absent. JSON.parse is linear; the route caps the body.

/** The body as JSON; 422 when it is none. */
export function parseJson(body: Buffer | string | undefined, what: string): unknown {
  try {
    return JSON.parse(body === undefined ? '' : body.toString()) as unknown;
  } catch {
    throw new AppError('validation_error', `The body is not ${what} (JSON).`);
  }
}

/** A member of an object; undefined when `value` is no object. */
export function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;
}

/** A string (a number written as one: Postmark's IDs are numbers), cut at `max` characters. */
export function text(value: unknown, max = 1000): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' ? value.slice(0, max) : undefined;
}

/** The items of a list; none when `value` is no list. */
export function items(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/** Whether a signature check passed: a signature OpenSSL cannot even parse fails it, as a wrong one does. */
export function verifies(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}
