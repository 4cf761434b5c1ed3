import type { FastifyReply } from 'fastify';
import { Parser } from 'htmlparser2';
import { removedAfter } from '../domain/retention/retention.ts';
import { html, type Html } from './html.ts';

// A message's html, shown as the recipient's mail client would, but harmless: served on its own
// route into an iframe sandboxed without scripts and without the dashboard's origin, and under a
// policy of its own that runs no script and loads nothing from elsewhere (remote images only when
// the reader asks, as mail clients do).

/** The attributes that load an image (what the frame's img-src governs), and CSS's url(). */
const IMAGE_ATTRIBUTES = new Set(['src', 'srcset', 'background', 'poster']);
const REMOTE = /^\s*(https?:)?\/\//i;
const REMOTE_IN_CSS = /url\(\s*["']?\s*(https?:)?\/\//i;

/**
 * Whether `body` would load an image from elsewhere: an image attribute or a style (attribute or
 * element) naming an http(s) URL. htmlparser2 reads it as a browser would, entities decoded, in one pass.
 */
export function hasRemoteImages(body: string): boolean {
  if (!body.includes('//')) return false;
  let found = false;
  let inStyle = false;
  const parser = new Parser({
    onopentagname: (name) => void (inStyle = name === 'style'),
    onclosetag: () => void (inStyle = false),
    onattribute: (name, value) => {
      if ((IMAGE_ATTRIBUTES.has(name) && (REMOTE.test(value) || (name === 'srcset' && /[\s,](https?:)?\/\//i.test(value)))) || (name === 'style' && REMOTE_IN_CSS.test(value))) found = true;
    },
    ontext: (text) => void (inStyle && REMOTE_IN_CSS.test(text) && (found = true)),
  });
  parser.end(body);
  return found;
}

/** The iframe of a message's html, with the link that shows its remote images when it has any. */
export function messageFrame(src: string, body: string | null): Html {
  if (body === null) return html``;
  const show = hasRemoteImages(body)
    ? html`<p><a href="${src}${src.includes('?') ? '&' : '?'}images=show" target="message-frame">Show remote images</a></p>`
    : '';
  return html`<section aria-labelledby="html-part"><h2 id="html-part">HTML</h2>
${show}
<iframe class="message" name="message-frame" title="The email's HTML" sandbox src="${src}"></iframe></section>`;
}

/** In place of a message's html, text and source once retention removed them: says so, and why. */
export function removedBody(days: number): Html {
  return html`<section aria-labelledby="body-removed"><h2 id="body-removed">Body</h2>
<p class="notice">Body ${removedAfter(days)}: its html, text, attachments and source are gone; what is shown here is kept.</p></section>`;
}

/** Answers a message's html for its iframe: no script, no form, images from elsewhere only when asked. */
export function sandboxedHtml(reply: FastifyReply, body: string, remoteImages: boolean): FastifyReply {
  const images = remoteImages ? 'img-src data: https: http:' : 'img-src data:';
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', `default-src 'none'; ${images}; style-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; sandbox`)
    .header('x-frame-options', 'SAMEORIGIN')
    .send(body);
}

/** A message's headers as a table of names and values (each value unfolded; a repeated name on each of its lines). */
export function headerTable(headers: [string, string][]): Html {
  if (headers.length === 0) return html``;
  return html`<section aria-labelledby="headers"><h2 id="headers">Headers</h2>
<table class="list headers"><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>${headers.map(([name, value]) => html`<tr><td><code>${name}</code></td><td>${value}</td></tr>`)}</tbody></table></section>`;
}
