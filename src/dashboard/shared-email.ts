import type { FastifyReply } from 'fastify';
import type { App } from '../app.ts';
import type { Context } from '../context.ts';
import { openSharedEmail, type SharedEmail } from '../domain/links/shared-emails.ts';
import { errorPageOf } from './error-page.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';
import { messageFrame, removedBody, sandboxedHtml } from './message-view.ts';
import { when } from './page-parts.ts';

// The page a share link opens (POST /emails/:id/share): an email's detail as the dashboard shows it,
// without the account: no navigation, no actions, no events, no Bcc, no headers. Public: the signed
// token in the path is the only credential, so the page is never framed, cached, indexed or named in
// a Referer, and an altered or expired token gets a small 404 page, never the email.

const HTML = 'text/html; charset=utf-8';

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
};

const list = (addresses: string[]) => addresses.join(', ');

function content(email: SharedEmail, token: string, retentionDays: number): Html {
  return html`<p class="notice">A shared email: anyone with this link can read it until ${when(email.link_expires_at)} UTC.</p>
<dl class="facts">
<dt>From</dt><dd>${email.from}</dd>
<dt>To</dt><dd>${list(email.to)}</dd>
${email.cc.length ? html`<dt>Cc</dt><dd>${list(email.cc)}</dd>` : ''}
${email.reply_to.length ? html`<dt>Reply-To</dt><dd>${list(email.reply_to)}</dd>` : ''}
<dt>Subject</dt><dd>${email.subject || '(no subject)'}</dd>
<dt>Date</dt><dd>${when(email.created_at)}</dd>
</dl>
${email.body_removed ? removedBody(retentionDays) : messageFrame(`/shared/${token}/html`, email.html)}
${email.text !== null ? html`<section aria-labelledby="text"><h2 id="text">Text</h2><pre class="text">${email.text}</pre></section>` : ''}
${email.attachments.length ? html`<section aria-labelledby="attachments"><h2 id="attachments">Attachments</h2><ul>${email.attachments.map((a) => html`<li><a href="${a.download_url}">${a.filename ?? 'attachment'}</a> (${a.content_type}, ${a.size} bytes)</li>`)}</ul></section>` : ''}`;
}

const sendPage = (reply: FastifyReply, status: number, title: string, body: Html) => reply.status(status).type(HTML).send(page(title, body, { shared: true }));

/** GET /shared/:token, the page, and /shared/:token/html, the email's html for its sandboxed frame. */
export function sharedEmailRoutes(app: App, ctx: Context): void {
  app.register(
    async (scope) => {
      scope.addHook('onRequest', async (_request, reply) => void reply.headers(SECURITY_HEADERS));
      scope.setErrorHandler(async (error, request, reply) => {
        const { status, title, message } = errorPageOf(error, request, reply, 'shared email page', 'Link not found');
        return sendPage(reply, status, title, html`<p>${message}</p>`);
      });

      const options = { config: { access: 'public' as const }, schema: { hide: true } };
      const tokenOf = (params: unknown) => (params as { token: string }).token;

      scope.get('/:token', options, async (request, reply) => {
        const token = tokenOf(request.params);
        const email = await openSharedEmail(ctx, token);
        return sendPage(reply, 200, email.subject || '(no subject)', content(email, token, ctx.config.retentionDays));
      });

      scope.get('/:token/html', options, async (request, reply) => {
        const email = await openSharedEmail(ctx, tokenOf(request.params));
        return sandboxedHtml(reply, email.html ?? '', (request.query as { images?: string }).images === 'show');
      });
    },
    { prefix: '/shared' },
  );
}
