import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as downloads from '../../domain/links/downloads.ts';
import { attachmentDisposition } from '../content-disposition.ts';
import { MAX, Str } from '../schemas/common.ts';

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

/**
 * The type a file is served as: its own when it is an image (not SVG, which can hold script), a PDF or
 * plain text, bytes for anything else, so that a sender-chosen `text/javascript` or `text/html` on this
 * origin is never anything a browser runs, whatever else fails.
 */
function servedType(type: string): string {
  const essence = type.split(';')[0]!.trim().toLowerCase();
  const shown = (essence.startsWith('image/') && !essence.startsWith('image/svg')) || essence === 'application/pdf' || essence === 'text/plain';
  return shown && /^[\x20-\x7e]+$/.test(type) ? type : 'application/octet-stream';
}

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
            description: 'The file as an attachment: with its own Content-Type when an image, a PDF or plain text, else application/octet-stream',
            content: { '*/*': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const file = await downloads.openDownload(ctx, { ...request.params, ...request.query });
      return reply
        .headers(FILE_HEADERS)
        .type(servedType(file.contentType))
        .header('content-disposition', attachmentDisposition(file.filename))
        .send(file.bytes);
    },
  );
}
