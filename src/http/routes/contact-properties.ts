import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as properties from '../../domain/contacts/contact-properties.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { PropertyBody, PropertyValue } from '../schemas/contacts.ts';
import { deleted, IdParams, listOfSchema, Nullable, objectId, UUID } from '../schemas/common.ts';

const PropertyItem = Type.Object({
  id: Type.String(),
  key: Type.String(),
  type: Type.String(),
  fallback_value: Nullable(PropertyValue),
  created_at: Type.String(),
});

export function contactPropertyRoutes(app: App, ctx: Context): void {
  app.post(
    '/contact-properties',
    { schema: { summary: 'Create a contact property', body: PropertyBody, response: { 201: objectId('contact_property') } } },
    async (request, reply) =>
      reply.status(201).send({ object: 'contact_property' as const, ...(await properties.createProperty(ctx, projectOf(request), request.body)) }),
  );

  app.get(
    '/contact-properties',
    {
      schema: {
        summary: 'List contact properties (always paginated)',
        querystring: PageQuery,
        response: { 200: listOfSchema(PropertyItem) },
      },
    },
    async (request) => listOf(await properties.listProperties(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/contact-properties/:id${UUID}`,
    {
      schema: {
        summary: 'Retrieve a contact property',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('contact_property'), ...PropertyItem.properties }) },
      },
    },
    async (request) => properties.getProperty(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    `/contact-properties/:id${UUID}`,
    {
      schema: {
        summary: "Change a property's fallback value",
        params: IdParams,
        body: PropertyBody,
        response: { 200: objectId('contact_property') },
      },
    },
    async (request) => {
      await properties.updateProperty(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'contact_property' as const, id: request.params.id };
    },
  );

  app.delete(
    `/contact-properties/:id${UUID}`,
    {
      schema: {
        summary: "Delete a contact property and every contact's value for it",
        params: IdParams,
        response: { 200: deleted('contact_property') },
      },
    },
    async (request) => {
      await properties.deleteProperty(ctx, projectOf(request), request.params.id);
      return { object: 'contact_property' as const, id: request.params.id, deleted: true };
    },
  );
}
