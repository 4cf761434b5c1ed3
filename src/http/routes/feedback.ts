import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { feedbackReaders, PROVIDERS, receiveFeedback, SOURCE_NAMES } from '../../domain/feedback/feedback.ts';

// The providers' notification routes (docs/relays.md). Public: each is authenticated the way its
// provider signs (an SNS signature, basic auth, an HMAC, an ECDSA signature), which needs the body as
// it came, so this scope reads bodies as bytes. SNS posts its JSON as text/plain.

/** SNS messages are at most 256 KB, escaped once more in their envelope; SendGrid batches stay well under. */
const BODY_LIMIT = 1024 * 1024;

const Received = Type.Object({
  object: Type.Literal('feedback'),
  recorded: Type.Integer({ description: 'Notifications recorded now' }),
  duplicates: Type.Integer({ description: 'Notifications recorded already: nothing recorded again' }),
  ignored: Type.Integer({ description: 'Notifications about no email of ours, or none of its recipients' }),
});

export function feedbackRoutes(app: App, ctx: Context): void {
  const readers = feedbackReaders(ctx);
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));
    for (const provider of PROVIDERS) {
      scope.post(
        `/feedback/${provider}`,
        {
          bodyLimit: BODY_LIMIT,
          config: { access: 'public' },
          schema: {
            summary: `${SOURCE_NAMES[provider]}'s bounce, complaint and delivery notifications (no API key: the provider's signature is the credential)`,
            consumes: ['application/json', 'text/plain'],
            response: { 200: Received },
          },
        },
        async (request) => receiveFeedback(ctx, provider, readers[provider], { headers: request.headers, body: request.body as Buffer | undefined }),
      );
    }
  });
}
