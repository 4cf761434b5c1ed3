import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { shareEmail } from '../../domain/links/shared-emails.ts';
import { projectOf } from '../auth.ts';
import { IdParams, MAX, Str, UUID } from '../schemas/common.ts';

const ShareBody = Type.Object({
  expires_in: Type.Optional(Str(MAX.short, 'How long the link works: a duration such as "10m", "2 hours" or "1 day"; 48h by default, at most 48 hours')),
});

const ShareResponse = Type.Object({
  object: Type.Literal('email'),
  id: Type.String(),
  url: Type.String({ description: 'The public link to a read-only page of the email, valid until it expires' }),
});

/**
 * Share links of sent and received emails (the page they open: dashboard/shared-email.ts). Full-access
 * keys only: a link shows the email's content to anyone who holds it.
 */
export function emailShareRoutes(app: App, ctx: Context): void {
  app.post(
    `/emails/:id${UUID}/share`,
    {
      // The body is optional (Resend's spec): a POST with neither body nor Content-Type reads as {}.
      preValidation: async (request) => void (request.body ??= {}),
      schema: {
        summary: 'Create a shareable link for a sent or received email',
        params: IdParams,
        body: ShareBody,
        response: { 200: ShareResponse },
      },
    },
    async (request) => shareEmail(ctx, projectOf(request), request.params.id, request.body.expires_in),
  );
}
