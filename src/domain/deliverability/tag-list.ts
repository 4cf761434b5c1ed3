// DKIM, DMARC, MTA-STS and TLS-RPT records are tag lists (RFC 6376, 3.2): `v=DMARC1; p=none; rua=...`.

/** The tags of a record, by lower-cased name, values trimmed; a tag named twice keeps its first value. */
export function tagsOf(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim().toLowerCase();
    if (name && !tags.has(name)) tags.set(name, part.slice(at + 1).trim());
  }
  return tags;
}

/** The record with `changes` made: a tag it has takes the new value in place, another is added at the end. */
export function withTags(text: string, changes: Record<string, string>): string {
  const tags = tagsOf(text);
  for (const [name, value] of Object.entries(changes)) tags.set(name, value);
  return [...tags].map(([name, value]) => `${name}=${value}`).join('; ');
}
