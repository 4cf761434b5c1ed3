import swagger from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../app.ts';

/** Every error answer, from the one error handler: Resend's `{statusCode, name, message}`. */
const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer({ description: 'The HTTP status, repeated' }),
    name: Type.String({ description: "Resend's error name: validation_error, missing_required_field, not_found, missing_api_key..." }),
    message: Type.String({ description: 'What went wrong, naming the field at fault; a 5xx adds the request id' }),
  },
  { $id: 'ErrorBody' },
);

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: Type.Ref('ErrorBody') } } });

/**
 * Serves the OpenAPI document of the routes declared after it (at the API's public URL), and gives
 * each the parts every route shares.
 */
export async function describeRoutes(app: App, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: { title: 'Mailroom', description: "Resend's email API, self-hosted.", version: '0.1.0' },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key of a project: the key decides the project' },
          adminKey: { type: 'http', scheme: 'bearer', description: 'An admin key (MAILROOM_ADMIN_KEY, or one made with `npm run keys -- create --admin`): the /projects routes alone' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [{ name: 'Mailroom: projects', description: 'Mailroom’s own routes, not Resend’s: projects, for an admin key alone (docs/projects.md)' }],
    },
    // Shared schemas appear under their own names (`#/components/schemas/ErrorBody`), not `def-0`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  // One schema for the document's components and the error serializer alike.
  app.addSchema(ErrorBody);
  app.addHook('onRoute', describeRoute);
}

/**
 * onRoute hook: what every route's schema shares, declared once rather than per route. Every route may
 * answer an error, in Resend's shape (the schema also serializes it), unless it declares its own (the
 * unsubscribe page answers html); a public route needs no API key, and an admin route the admin key.
 */
function describeRoute(route: RouteOptions): void {
  const schema = route.schema ?? {};
  route.schema = {
    ...schema,
    response: {
      '4xx': errorResponse('A request error: a missing or invalid field, key or id, in Resend’s shape'),
      '5xx': errorResponse('An unexpected failure; the message carries the request id, also in x-request-id'),
      ...(schema.response as object | undefined),
    },
    ...(route.config?.access === 'public' ? { security: [] } : route.config?.access === 'admin' ? { security: [{ adminKey: [] }] } : {}),
  };
}
