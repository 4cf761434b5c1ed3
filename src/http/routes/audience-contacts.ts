import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import { Contact, ContactCreated, ContactDeleted, CreateContactBody, UpdateContactBody } from '../schemas/contacts.ts';
import { IdParams, MAX, Str, UUID } from '../schemas/common.ts';
import { projectOf } from '../auth.ts';

// The legacy contact routes under an audience (older SDKs, and `audienceId` in the current one): the
// global contacts, seen through one segment. Listing them is GET /audiences/:id/contacts (segments.ts).

const AudienceContactParams = Type.Object({
  id: Str(MAX.id, 'The audience (segment) id'),
  contact_id: Str(MAX.id, 'The contact id or email address'),
});

export function audienceContactRoutes(app: App, ctx: Context): void {
  app.post(
    `/audiences/:id${UUID}/contacts`,
    {
      schema: {
        summary: 'Create a contact in an audience (deprecated)',
        params: IdParams,
        body: CreateContactBody,
        response: { 201: ContactCreated },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ object: 'contact' as const, ...(await contacts.createContact(ctx, projectOf(request), request.body, request.params.id)) }),
  );

  app.get(
    `/audiences/:id${UUID}/contacts/:contact_id`,
    { schema: { summary: 'Retrieve a contact of an audience (deprecated)', params: AudienceContactParams, response: { 200: Contact } } },
    async (request) => contacts.getContact(ctx, projectOf(request), request.params.contact_id, request.params.id),
  );

  app.patch(
    `/audiences/:id${UUID}/contacts/:contact_id`,
    {
      schema: {
        summary: 'Update a contact of an audience (deprecated)',
        params: AudienceContactParams,
        body: UpdateContactBody,
        response: { 200: ContactCreated },
      },
    },
    async (request) => {
      const { id } = await contacts.updateContact(ctx, projectOf(request), request.params.contact_id, request.body, request.params.id);
      return { object: 'contact' as const, id };
    },
  );

  app.delete(
    `/audiences/:id${UUID}/contacts/:contact_id`,
    {
      schema: {
        summary: 'Remove a contact from an audience (deprecated)',
        params: AudienceContactParams,
        response: { 200: ContactDeleted },
      },
    },
    async (request) => contacts.deleteContact(ctx, projectOf(request), request.params.contact_id, request.params.id),
  );
}
