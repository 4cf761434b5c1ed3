// MTA-STS (RFC 8461) as text: the `_mta-sts` TXT record, the policy file, and which MX hosts a policy
// names. Pure, linear in their input (which comes from anyone's DNS and web server), with size caps.

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  /** The TXT record's id the policy was fetched under: a new id means a new policy. */
  id: string;
  mode: StsMode;
  /** MX patterns: a host name, or `*.` and a name (one label of any name). */
  mx: string[];
  /** Seconds the policy may be kept. */
  maxAge: number;
  /** The policy's lines as fetched, for TLS reports' `policy-string`. */
  text: string[];
}

/** RFC 8461 3.2: at most a year. */
const MAX_AGE_LIMIT = 31_557_600;
/** More MX patterns than any real policy has. */
const MAX_PATTERNS = 100;

/** The id of the one `v=STSv1` record among a name's TXT records; undefined for none, several, or a malformed one (RFC 8461 3.1). */
export function stsRecordId(records: string[]): string | undefined {
  const sts = records.filter((record) => /^v=STSv1\s*(;|$)/.test(record));
  if (sts.length !== 1 || sts[0]!.length > 1000) return undefined;
  const fields = new Map(
    sts[0]!
      .split(';')
      .map((field) => field.trim())
      .filter(Boolean)
      .map((field) => [field.slice(0, field.indexOf('=')).trim(), field.slice(field.indexOf('=') + 1).trim()] as const),
  );
  const id = fields.get('id');
  return id !== undefined && /^[A-Za-z0-9]{1,32}$/.test(id) ? id : undefined;
}

/** A host name as compared: lower case, no trailing dot. */
export const hostKey = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** The policy file's text read (RFC 8461 3.2), or why it is invalid. */
export function parseStsPolicy(id: string, body: string): StsPolicy | { invalid: string } {
  const lines = body.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  const fields = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { invalid: `a line is not "key: value": "${line.slice(0, 80)}"` };
    const key = line.slice(0, colon).trim();
    fields.set(key, [...(fields.get(key) ?? []), line.slice(colon + 1).trim()]);
  }
  if (fields.get('version')?.[0] !== 'STSv1') return { invalid: 'version is not STSv1' };
  const mode = fields.get('mode')?.[0];
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') return { invalid: `mode is not enforce, testing or none ("${mode ?? ''}")` };
  const maxAge = Number(fields.get('max_age')?.[0]);
  if (!/^\d{1,10}$/.test(fields.get('max_age')?.[0] ?? '') || maxAge > MAX_AGE_LIMIT) return { invalid: 'max_age is not a number of seconds up to 31557600' };
  const mx = (fields.get('mx') ?? []).map(hostKey);
  if (mode !== 'none' && mx.length === 0) return { invalid: 'no mx line' };
  if (mx.length > MAX_PATTERNS || mx.some((pattern) => !/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(pattern))) return { invalid: 'an mx line is not a host name or *.name' };
  return { id, mode, mx, maxAge, text: lines };
}

/** Whether `host` is named by one of `patterns`: exactly, or as one label left of a `*.` pattern (RFC 8461 4.1). */
export function mxMatches(patterns: string[], host: string): boolean {
  const name = hostKey(host);
  return patterns.some((pattern) => (pattern.startsWith('*.') ? name.slice(name.indexOf('.') + 1) === pattern.slice(2) && name.indexOf('.') > 0 : name === pattern));
}
