/** RFC 5987 attr-char: what `filename*` may carry unencoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+.^_`|~-]/;

/** Percent-encodes the UTF-8 bytes of `value` (a lone surrogate becomes U+FFFD, never an exception). */
function percentEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * `Content-Disposition: attachment` for a file named by whoever sent it. Control characters are dropped;
 * the quoted `filename` keeps printable ASCII, quotes and backslashes becoming `_`; a name with other
 * characters also goes whole in RFC 5987's `filename*`, which browsers and `curl -J` prefer.
 */
export function attachmentDisposition(filename: string | null): string {
  const name = (filename ?? '').replace(/[\x00-\x1f\x7f]/g, '');
  if (name === '') return 'attachment';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return ascii === name ? `attachment; filename="${name}"` : `attachment; filename="${ascii}"; filename*=UTF-8''${percentEncode(name)}`;
}
