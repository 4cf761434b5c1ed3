// Where a domain wants its TLS reports: the one `v=TLSRPTv1` TXT record at `_smtp._tls.<domain>`, its
// `rua` a comma-separated list of mailto: and https: URIs (RFC 8460 3). Read in linear time, capped.

const MAX_URIS = 10;

function decodedAddress(uri: string): string[] {
  try {
    return [decodeURIComponent(uri.slice('mailto:'.length))];
  } catch {
    return [];
  }
}

/** The mailto: addresses and https: URLs of `records`; none for no record, several, or a malformed one. */
export function reportAddresses(records: string[]): { mailto: string[]; https: string[] } {
  const none = { mailto: [], https: [] };
  const tlsrpt = records.filter((record) => /^v=TLSRPTv1\s*(;|$)/.test(record));
  if (tlsrpt.length !== 1 || tlsrpt[0]!.length > 2000) return none;
  const rua = tlsrpt[0]!
    .split(';')
    .map((field) => field.trim())
    .find((field) => /^rua\s*=/.test(field));
  if (!rua) return none;
  const uris = rua.slice(rua.indexOf('=') + 1).split(',').map((uri) => uri.trim()).filter(Boolean).slice(0, MAX_URIS);
  const mailto = uris.filter((uri) => /^mailto:[^\s@,;<>]+@[^\s@,;<>]+\.[^\s@,;<>]+$/i.test(uri)).flatMap(decodedAddress);
  const https = uris.filter((uri) => /^https:\/\//i.test(uri) && URL.canParse(uri));
  return { mailto, https };
}
