import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { followLink, openPixel, type TrackingFetch } from '../../domain/tracking/engagements.ts';
import { CLICK_PATH, OPEN_PATH } from '../../domain/tracking/tracked-html.ts';
import { trackingKey } from '../../domain/tracking/tracking-tokens.ts';

// The open pixel and the click redirect of tracked emails (docs/tracking.md). Public: the signed token
// is the only credential. The token is the rest of the path (a wildcard: a click's token grows with its
// link, past the router's limit on a parameter's length).

/** A 1x1 transparent GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

// Every fetch must reach us to be counted: nothing may keep a copy.
const NO_CACHE = { 'cache-control': 'no-store, no-cache, must-revalidate, max-age=0', pragma: 'no-cache', expires: '0' };

const TokenParams = Type.Object({ '*': Type.String({ maxLength: 16_384, description: 'The signed token of the URL' }) });

const notOurs = () => new AppError('not_found', 'This tracking link is not valid.');

/** A Location header Node can write: the link as it is when printable ASCII, else its URL serialization (percent-encoded). */
const location = (link: string) => (/^[\x21-\x7e]+$/.test(link) ? link : new URL(link).href);

export function trackingRoutes(app: App, ctx: Context): void {
  const key = trackingKey(ctx.secret);
  const fetchOf = (request: { params: { '*': string }; method: string; ip: string; headers: { 'user-agent'?: string }; overLimit: boolean }): TrackingFetch => ({
    token: request.params['*'],
    method: request.method,
    ipAddress: request.ip,
    userAgent: request.headers['user-agent'],
    unrecorded: request.overLimit,
  });

  app.get(
    `${OPEN_PATH}*`,
    {
      // Past the client's rate, still the image (a recipient never sees a broken one), recording nothing.
      config: { access: 'public', overLimit: 'answer' },
      schema: {
        summary: 'The open pixel of a tracked email: records email.opened (no API key: the token is the credential)',
        params: TokenParams,
        response: { 200: { description: 'A 1x1 transparent GIF, never cached', content: { 'image/gif': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } } } },
      },
    },
    async (request, reply) => {
      if (!(await openPixel(ctx, key, fetchOf(request)))) throw notOurs();
      return reply.headers(NO_CACHE).type('image/gif').send(PIXEL);
    },
  );

  app.get(
    `${CLICK_PATH}*`,
    {
      config: { access: 'public', overLimit: 'answer' },
      schema: {
        summary: 'The redirect of a tracked link: records email.clicked and answers 302 to the original link (no API key: the token is the credential)',
        params: TokenParams,
        response: { 302: { description: 'To the link the token was signed for', type: 'null' } },
      },
    },
    async (request, reply) => {
      const link = await followLink(ctx, key, fetchOf(request));
      if (link === undefined) throw notOurs();
      return reply.header('cache-control', 'no-store').redirect(location(link), 302);
    },
  );
}
