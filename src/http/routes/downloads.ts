import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as downloads from '../../domain/downloads/downloads.ts';
import { attachmentDisposition } from '../content-disposition.ts';
import { MAX, Str } from '../schemas.ts';

// The file a sender chose, served from the API's own origin: always downloaded, never rendered nor
// sniffed (html in an attachment must not run as a page of ours), never cached nor named in a Referer,
// since the URL is the credential.
const FILE_HEADERS = {
  'cache-control': 'private, no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'referrer-policy': 'no-referrer',
};

const DownloadParams = Type.Object({ kind: Str(MAX.short), id: Str(MAX.id) });

const DownloadQuery = Type.Object({
  expires: Type.Optional(Str(MAX.short, 'When the link expires, in Unix seconds')),
  signature: Type.Optional(Str(MAX.short, 'The HMAC of kind, id and expires')),
});

/** A type Node can write as a header; a stored one that is not falls back to bytes. */
const headerType = (type: string) => (/^[\x20-\x7e]+$/.test(type) ? type : 'application/octet-stream');

/** The signed download links of attachments (public: the signature is the credential, docs/api.md). */
export function downloadRoutes(app: App, ctx: Context): void {
  app.get(
    '/downloads/:kind/:id',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Download a file by the signed link an attachment object gives (no API key; a link works for an hour)',
        params: DownloadParams,
        querystring: DownloadQuery,
        response: {
          200: {
            description: 'The file, with its own Content-Type, as an attachment',
            content: { '*/*': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const file = await downloads.openDownload(ctx, { ...request.params, ...request.query });
      return reply
        .headers(FILE_HEADERS)
        .type(headerType(file.contentType))
        .header('content-disposition', attachmentDisposition(file.filename))
        .send(file.bytes);
    },
  );
}
