import { createRequire } from 'node:module';

// A statement with its parameters written in as literals, so that several can go in one simple-query
// message (which takes no parameters): write-behind.ts.

/** pg's own conversion of a value to the text it sends as a parameter (arrays, JSON, dates, buffers). */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(value: unknown): string | Buffer | null };

/** The literal PostgreSQL reads as the parameter pg would have sent: untyped, as `$n` is, and typed by its place. */
function literal(value: unknown): string {
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  // bytea's hex form has no quote in it, and nothing to scan: a message as sent is tens of kilobytes.
  if (Buffer.isBuffer(prepared)) return ` E'\\\\x${prepared.toString('hex')}'`;
  return quoted(prepared);
}

/**
 * pg.escapeLiteral's literal (quotes doubled; backslashes doubled under E'' when there are any), made
 * with whole-string replaces: pg's adds one character at a time, a rope the socket write must flatten.
 */
function quoted(text: string): string {
  const inner = text.replaceAll("'", "''");
  return text.includes('\\') ? ` E'${inner.replaceAll('\\', '\\\\')}'` : `'${inner}'`;
}

/**
 * `sql` with each `$n` outside quotes, quoted identifiers, dollar-quoted strings and comments replaced
 * by its parameter's literal; one pass, linear in the text.
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string {
  let out = '';
  let from = 0;
  let i = 0;
  const skipTo = (end: string, start: number) => {
    const at = sql.indexOf(end, start);
    return at === -1 ? sql.length : at + end.length;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" && (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !/[A-Za-z0-9_$]/.test(sql[i - 2] ?? ' ')) {
      // E'...': a backslash escapes the character after it.
      for (i++; i < sql.length && sql[i] !== "'"; i++) if (sql[i] === '\\') i++;
      i++;
    } else if (c === "'" || c === '"') {
      // A doubled quote inside is two quoted runs in a row: each is skipped in turn.
      i = skipTo(c, i + 1);
    } else if (c === '-' && sql[i + 1] === '-') {
      i = skipTo('\n', i + 2);
    } else if (c === '/' && sql[i + 1] === '*') {
      i = skipTo('*/', i + 2);
    } else if (c === '$') {
      let j = i + 1;
      while (j < sql.length && sql[j]! >= '0' && sql[j]! <= '9') j++;
      if (j > i + 1) {
        out += sql.slice(from, i) + literal(parameters[Number(sql.slice(i + 1, j)) - 1]);
        from = i = j;
        continue;
      }
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))?.[0];
      i = tag ? skipTo(tag, i + tag.length) : i + 1;
    } else {
      i++;
    }
  }
  return out + sql.slice(from);
}
