import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import {
  Contact,
  ContactCreated,
  ContactDeleted,
  ContactItem,
  ContactListQuery,
  ContactParams,
  CreateContactBody,
  UpdateContactBody,
} from '../schemas/contacts.ts';
import { parsePage, replyList } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { listOfSchema } from '../schemas/common.ts';

export function contactRoutes(app: App, ctx: Context): void {
  app.post(
    '/contacts',
    {
      schema: {
        summary: 'Create a contact (or answer the id of the one with this email)',
        body: CreateContactBody,
        response: { 201: ContactCreated },
      },
    },
    async (request, reply) => reply.status(201).send({ object: 'contact' as const, ...(await contacts.createContact(ctx, projectOf(request), request.body)) }),
  );

  app.get(
    '/contacts',
    {
      schema: {
        summary: 'List contacts, all of them when limit is omitted',
        querystring: ContactListQuery,
        response: { 200: listOfSchema(ContactItem) },
      },
    },
    async (request, reply) => {
      const { segment_id, audience_id } = request.query;
      return replyList(reply, await contacts.listContacts(ctx, projectOf(request), parsePage(request.query, { everything: true }), segment_id ?? audience_id));
    },
  );

  app.get(
    '/contacts/:id',
    { schema: { summary: 'Retrieve a contact by id or email', params: ContactParams, response: { 200: Contact } } },
    async (request) => contacts.getContact(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    '/contacts/:id',
    {
      schema: {
        summary: 'Update a contact by id or email',
        params: ContactParams,
        body: UpdateContactBody,
        response: { 200: ContactCreated },
      },
    },
    async (request) => ({ object: 'contact' as const, ...(await contacts.updateContact(ctx, projectOf(request), request.params.id, request.body)) }),
  );

  app.delete(
    '/contacts/:id',
    { schema: { summary: 'Delete a contact by id or email', params: ContactParams, response: { 200: ContactDeleted } } },
    async (request) => contacts.deleteContact(ctx, projectOf(request), request.params.id),
  );
}
