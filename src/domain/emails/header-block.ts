// A message's header block, read and edited without touching anything else: every kept field keeps
// its bytes (folding, encoding, order), and the body is not looked at.

export interface HeaderField {
  /** The field name, lower-cased; '' for a line that is not a field. */
  name: string;
  /** The field's value, unfolded and trimmed (its bytes read as latin1, as they came). */
  value: string;
  /** The field's lines as written, line ends included. */
  raw: Buffer;
}

export interface SplitMessage {
  fields: HeaderField[];
  /** From the empty line that ends the header block to the end of the message. */
  rest: Buffer;
}

/** The index just past the header block's last line: where its ending empty line starts. */
function headerEnd(raw: Buffer): number {
  if (raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a)) return 0;
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return raw.length;
  if (crlf === -1) return lf + 1;
  if (lf === -1) return crlf + 2;
  return Math.min(crlf + 2, lf + 1);
}

/** Splits a message into its header fields and the rest. */
export function splitMessage(raw: Buffer): SplitMessage {
  const end = headerEnd(raw);
  const fields: HeaderField[] = [];
  let start = 0;
  while (start < end) {
    // A field runs until a line that does not start with a space or a tab (a folded line continues it).
    let next = raw.indexOf(0x0a, start);
    while (next !== -1 && next + 1 < end && (raw[next + 1] === 0x20 || raw[next + 1] === 0x09)) next = raw.indexOf(0x0a, next + 1);
    const stop = next === -1 || next >= end ? end : next + 1;
    const bytes = raw.subarray(start, stop);
    const text = bytes.toString('latin1');
    const colon = text.indexOf(':');
    const name = colon > 0 && !/[\s]/.test(text.slice(0, colon)) ? text.slice(0, colon).toLowerCase() : '';
    fields.push({ name, value: name ? text.slice(colon + 1).replace(/\r?\n[ \t]/g, ' ').trim() : '', raw: bytes });
    start = stop;
  }
  return { fields, rest: end === raw.length ? Buffer.from('\r\n') : raw.subarray(end) };
}

/** The value of the first field named `name` (lower-case), if any. */
export const fieldValue = (message: SplitMessage, name: string): string | undefined => message.fields.find((f) => f.name === name)?.value;

/** The message again: `added` fields first (each `Name: value`), then the kept fields as they came, then the rest. */
export function joinMessage(added: string[], fields: HeaderField[], rest: Buffer): Buffer {
  return Buffer.concat([Buffer.from(added.map((line) => `${line}\r\n`).join(''), 'latin1'), ...fields.map((f) => f.raw), rest]);
}
