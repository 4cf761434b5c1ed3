// What a request log keeps of a body: a copy with its secrets replaced, its long strings cut, within a
// size (MAILROOM_LOG_BODY_BYTES). The one rule for every body, request and response alike.

export const REDACTED = '[redacted]';

/**
 * A field whose name holds one of these, in any case, is replaced by REDACTED wherever it is: API key
 * tokens (`token`), webhook signing secrets (`signing_secret`), passwords, DKIM private keys, and any
 * field named like them (a template variable `reset_token`).
 */
export const SECRET_NAMES = ['token', 'secret', 'password', 'private_key'] as const;

/** The fields replaced in each item of an `attachments` list: the file itself. */
export const ATTACHMENT_FIELDS = ['content'] as const;

const SECRET = new RegExp(SECRET_NAMES.join('|'), 'i');
const isAttachmentField = (key: string) => (ATTACHMENT_FIELDS as readonly string[]).includes(key);

/** What a log keeps of a body still over the limit once redacted and cut. */
export const omitted = (limit: number) => ({ _omitted: `over ${limit} bytes (MAILROOM_LOG_BODY_BYTES)` });

/** Thrown through the walk once the budget is spent: a plain object, no stack to capture. */
const SPENT = {};

/** A response is parsed only up to this many times the limit: past it, redacting and cutting could not bring it under. */
const PARSE_FACTOR = 8;

/**
 * The JSON text a log keeps of `value`: secrets replaced by REDACTED, strings over a quarter of `limit`
 * cut (ending `… [N characters cut]`), and the whole replaced by `omitted(limit)` if it is still over
 * `limit` bytes. The walk stops once the budget is spent, so a body of megabytes costs what a small one does.
 */
export function redactedJson(value: unknown, limit: number): string {
  const longest = Math.max(64, Math.floor(limit / 4));
  let budget = limit;
  const spend = (n: number) => {
    budget -= n;
    if (budget < 0) throw SPENT;
  };
  const copy = (item: unknown, attachment: boolean): unknown => {
    if (typeof item === 'string') {
      const kept = item.length > longest ? `${item.slice(0, longest)}… [${item.length - longest} characters cut]` : item;
      spend(kept.length + 2);
      return kept;
    }
    if (item === null || typeof item !== 'object') {
      spend(8);
      return item;
    }
    spend(2);
    if (Array.isArray(item)) return item.map((entry) => copy(entry, false));
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(item)) {
      spend(key.length + 4);
      if (field !== null && field !== undefined && (SECRET.test(key) || (attachment && isAttachmentField(key)))) out[key] = REDACTED;
      else if (key === 'attachments' && Array.isArray(field)) {
        spend(2);
        out[key] = field.map((entry) => copy(entry, true));
      } else out[key] = copy(field, false);
    }
    return out;
  };
  try {
    const text = JSON.stringify(copy(value, false));
    if (Buffer.byteLength(text) <= limit) return text;
  } catch (error) {
    if (error !== SPENT) throw error;
  }
  return JSON.stringify(omitted(limit));
}

/** The same of a response's serialized payload; null if it is not JSON. */
export function redactedPayload(payload: string, limit: number): string | null {
  if (payload.length > PARSE_FACTOR * limit) return JSON.stringify(omitted(limit));
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  return redactedJson(value, limit);
}
