import { Parser } from 'htmlparser2';

// The html of a tracked email, changed only where tracking needs it: htmlparser2 (the parser
// html-to-text reads the html with) finds the `href` attributes of links and the end of the body, and
// the new text is spliced into the original at those positions, so that everything else stays byte for
// byte as the sender wrote it, malformed parts included.

export interface Rewrite {
  /** The URL of the open pixel, added at the end of the body; none when undefined. */
  pixel?: string;
  /**
   * The URL an http(s) link is to point to instead, or undefined to leave it. Called with the link as a
   * browser reads it: entities decoded, surrounding whitespace removed.
   */
  link?: (href: string) => string | undefined;
}

/** Text safe inside a double-quoted attribute value. */
export function escapeAttribute(value: string): string {
  return value.replace(/[&"'<>]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const LINK_TAGS = new Set(['a', 'area']);
const ASCII_WHITESPACE = new Set(['\t', '\n', '\f', '\r', ' ']);

/** The URL an href holds: without ASCII whitespace around it (by hand: a trimming pattern backtracks on long runs). */
function trimHref(value: string): string {
  let [start, end] = [0, value.length];
  while (start < end && ASCII_WHITESPACE.has(value[start]!)) start++;
  while (end > start && ASCII_WHITESPACE.has(value[end - 1]!)) end--;
  return value.slice(start, end);
}

/** Whether `href` is an absolute http(s) URL, the only links a redirect stands in for. */
export function isWebLink(href: string): boolean {
  if (!/^https?:/i.test(href) || !URL.canParse(href)) return false;
  const { protocol } = new URL(href);
  return protocol === 'http:' || protocol === 'https:';
}

/** 1x1, transparent, kept out of the layout; `display:block` rather than `none`, which some clients do not load. */
const pixelTag = (url: string) =>
  `<img src="${escapeAttribute(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;

interface Splice {
  start: number;
  end: number;
  text: string;
}

/** Tags whose `href` is a link to follow: `<a>`, `<area>`, and VML shapes (Outlook's bulletproof buttons: `<v:roundrect href>`). */
const isLinkTag = (name: string) => LINK_TAGS.has(name) || name.startsWith('v:');
/** A downlevel-hidden conditional comment's content (`<!--[if mso]>...<![endif]-->`), which Outlook renders. */
const CONDITIONAL = /^\[if\b/i;
const COMMENT_OPEN = '<!--';

/**
 * The html with the `href` of each `<a>`, `<area>` and VML shape outside `<head>` that `rewrite.link`
 * replaces rewritten (the first `href` of a tag: the one a browser follows), and the pixel before the
 * last `</body>` (else the last `</html>`, else at the end). Conditional comments (`<!--[if mso]>`) are
 * read as html, since Outlook renders them; other comments, scripts and styles are not read.
 */
export function rewriteHtml(html: string, rewrite: Rewrite): string {
  const splices: Splice[] = [];
  const { bodyEnd, htmlEnd } = scan(html, 0, rewrite, splices);
  if (rewrite.pixel !== undefined) {
    const at = bodyEnd !== -1 ? bodyEnd : htmlEnd !== -1 ? htmlEnd : html.length;
    splices.push({ start: at, end: at, text: pixelTag(rewrite.pixel) });
  }
  if (splices.length === 0) return html;
  splices.sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  for (const { start, end, text } of splices) {
    out += html.slice(from, start) + text;
    from = end;
  }
  return out + html.slice(from);
}

/**
 * Adds to `splices` the new hrefs of `html`'s links, at their positions in the whole (`html` starts at
 * `offset` in it), reading a conditional comment's content the same way (one level: comments do not
 * nest, and reading `<!--[if` inside one again would read the rest once per level); answers where the
 * last `</body>` and `</html>` start (-1: none).
 */
function scan(html: string, offset: number, rewrite: Rewrite, splices: Splice[], nested = false): { bodyEnd: number; htmlEnd: number } {
  let inHead = false;
  let tag = '';
  let seenHref = false;
  let bodyEnd = -1;
  let htmlEnd = -1;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        tag = name;
        seenHref = false;
        if (name === 'head') inHead = true;
        if (name === 'body') inHead = false;
      },
      onattribute(name, value) {
        if (name !== 'href' || !isLinkTag(tag) || seenHref) return;
        seenHref = true;
        const href = trimHref(value);
        const target = !inHead && rewrite.link && isWebLink(href) ? rewrite.link(href) : undefined;
        if (target !== undefined) splices.push({ start: offset + parser.startIndex, end: offset + parser.endIndex, text: `href="${escapeAttribute(target)}"` });
      },
      oncomment(data) {
        if (nested || inHead || !rewrite.link || !CONDITIONAL.test(data)) return;
        // Only a real comment's content lies right after `<!--` (htmlparser2 reports CDATA as a comment too).
        const at = parser.startIndex + COMMENT_OPEN.length;
        if (html.startsWith(COMMENT_OPEN, parser.startIndex) && html.startsWith(data, at)) scan(data, offset + at, rewrite, splices, true);
      },
      onclosetag(name, implied) {
        if (name === 'head') inHead = false;
        if (implied) return;
        if (name === 'body') bodyEnd = offset + parser.startIndex;
        if (name === 'html') htmlEnd = offset + parser.startIndex;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return { bodyEnd, htmlEnd };
}
