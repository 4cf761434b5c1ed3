// What a request log keeps of a body: its JSON with the secrets replaced, within a size
// (MAILROOM_LOG_BODY_BYTES): whole if it fits, else with its long strings cut, else a marker. The one
// rule for every body, request and response alike.

export const REDACTED = '[redacted]';

/**
 * A field whose name holds one of these, in any case, is replaced by REDACTED wherever it is: API key
 * tokens (`token`), webhook signing secrets (`signing_secret`), passwords, DKIM private keys, and any
 * field named like them (a template variable `reset_token`).
 */
export const SECRET_NAMES = ['token', 'secret', 'password', 'private_key'] as const;

/** Fields named exactly so are links that are their own credential: a shared email's `url`, an attachment's `download_url`. */
export const LINK_NAMES = ['url', 'download_url'] as const;

/** The fields replaced in each item of an `attachments` list: the file itself. */
export const ATTACHMENT_FIELDS = ['content'] as const;

const SECRET = new RegExp(SECRET_NAMES.join('|'), 'i');
const isSecret = (key: string) => SECRET.test(key) || (LINK_NAMES as readonly string[]).includes(key);
const isAttachmentField = (key: string) => (ATTACHMENT_FIELDS as readonly string[]).includes(key);

/** What a log keeps of a body still over the limit once redacted and cut. */
export const omitted = (limit: number) => ({ _omitted: `over ${limit} bytes (MAILROOM_LOG_BODY_BYTES)` });

/** Thrown through the walk once the budget is spent: a plain object, no stack to capture. */
const SPENT = {};

/** Text past this many times the limit is not parsed: it is replaced by the marker unread. */
const PARSE_FACTOR = 8;

/**
 * `value` as JSON with its secrets replaced, or undefined once it passes `limit` (roughly: the walk
 * counts characters, stopping as soon as the budget is spent, so a body of megabytes costs what a small
 * one does). With `longest`, strings longer than that are cut, ending `… [N characters cut]`.
 */
function redactedWithin(value: unknown, limit: number, longest = Infinity): string | undefined {
  let budget = limit;
  const spend = (n: number) => {
    budget -= n;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught below: no stack to capture.
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
      if (field !== null && field !== undefined && (isSecret(key) || (attachment && isAttachmentField(key)))) out[key] = REDACTED;
      else if (key === 'attachments' && Array.isArray(field)) {
        spend(2);
        out[key] = field.map((entry) => copy(entry, true));
      } else out[key] = copy(field, false);
    }
    return out;
  };
  try {
    const text = JSON.stringify(copy(value, false));
    return Buffer.byteLength(text) <= limit ? text : undefined;
  } catch (error) {
    if (error !== SPENT) throw error;
    return undefined;
  }
}

/**
 * The JSON text a log keeps of `value`: secrets replaced by REDACTED; if that is over `limit` bytes,
 * strings over a quarter of the limit cut; if still over, `omitted(limit)` in its place.
 */
export function redactedJson(value: unknown, limit: number): string {
  return (
    redactedWithin(value, limit) ??
    redactedWithin(value, limit, Math.max(64, Math.floor(limit / 4))) ??
    JSON.stringify(omitted(limit))
  );
}

/**
 * Text that names none of these cannot hold what redaction replaces: it is kept as it is, unparsed. An
 * escape (`\u`) could spell a name in other letters, so it sends the text the long way too.
 */
const MAY_HOLD_SECRET = new RegExp([...SECRET_NAMES, ...LINK_NAMES.map((name) => `"${name}"`), '"attachments"', '\\\\u'].join('|'), 'i');

/**
 * The same of JSON text (a request as parsed, a response as serialized): text within the limit that
 * names no secret is kept as it is, without being parsed, which is most bodies.
 */
export function redactedText(json: string, limit: number): string {
  if (json.length <= limit && !MAY_HOLD_SECRET.test(json) && Buffer.byteLength(json) <= limit) return json;
  if (json.length > PARSE_FACTOR * limit) return JSON.stringify(omitted(limit));
  return redactedJson(JSON.parse(json), limit);
}
