import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { MAX_VARIABLES } from '../../domain/templates/template-variables.ts';
import * as templates from '../../domain/templates/templates.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { AddressList, CONTENT_BODY_LIMIT, deleted, listOfSchema, MAX, Nullable, objectId, Str, VariableValue } from '../schemas/common.ts';

// Optional fields of a template; null clears one on update.
const text = (maxLength: number, description: string) => Type.Optional(Type.Union([Str(maxLength), Type.Null()], { description }));

const VariableInput = Type.Object({
  key: Str(MAX.short, 'ASCII letters, digits and _, at most 50 characters'),
  type: Str(MAX.short, '"string" or "number"'),
  fallback_value: Type.Optional(Type.Union([Str(MAX.text), Type.Number(), Type.Null()], { description: 'a string, a number or null' })),
});

const templateFields = {
  alias: text(MAX.short, 'a string or null: a unique name usable in place of the id'),
  from: text(MAX.line, 'a string or null: "email@example.com" or "Name <email@example.com>"'),
  subject: text(MAX.line, 'a string or null'),
  reply_to: Type.Optional(Type.Union([...AddressList.anyOf, Type.Null()], { description: 'an email address, an array of them, or null' })),
  text: text(MAX.body, 'a string or null: without it, the text part is generated from the rendered html'),
  variables: Type.Optional(Type.Array(VariableInput, { maxItems: MAX_VARIABLES, description: 'At most 50; replaces the whole list on update' })),
};

const CreateBody = Type.Object({ name: Str(MAX.short), html: Str(MAX.body), ...templateFields });
const UpdateBody = Type.Object({ name: Type.Optional(Str(MAX.short)), html: Type.Optional(Str(MAX.body)), ...templateFields });

const TemplateListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.String(),
  published_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  alias: Nullable(Type.String()),
});

const Template = Type.Object({
  object: Type.Literal('template'),
  ...TemplateListItem.properties,
  current_version_id: Type.String(),
  from: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  reply_to: Nullable(Type.Array(Type.String())),
  html: Type.String(),
  text: Nullable(Type.String()),
  variables: Type.Array(
    Type.Object({
      id: Type.String(),
      key: Type.String(),
      type: Type.String(),
      fallback_value: Nullable(VariableValue),
      created_at: Type.String(),
      updated_at: Type.String(),
    }),
  ),
  has_unpublished_versions: Type.Boolean(),
});

const IdOrAlias = Type.Object({ id: Str(MAX.id, 'The template id or alias') });

export function templateRoutes(app: App, ctx: Context): void {
  app.post(
    '/templates',
    { bodyLimit: CONTENT_BODY_LIMIT, schema: { summary: 'Create a template (a draft)', body: CreateBody, response: { 201: objectId('template') } } },
    async (request, reply) => {
      const { id } = await templates.createTemplate(ctx, projectOf(request), request.body);
      return reply.status(201).send({ object: 'template' as const, id });
    },
  );

  app.get(
    '/templates',
    { schema: { summary: 'List templates', querystring: PageQuery, response: { 200: listOfSchema(TemplateListItem) } } },
    async (request) => listOf(await templates.listTemplates(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    '/templates/:id',
    { schema: { summary: 'Retrieve a template by id or alias', params: IdOrAlias, response: { 200: Template } } },
    async (request) => templates.getTemplate(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    '/templates/:id',
    {
      bodyLimit: CONTENT_BODY_LIMIT,
      schema: {
        summary: 'Update a template; a published one keeps sending its published version until published again',
        params: IdOrAlias,
        body: UpdateBody,
        response: { 200: objectId('template') },
      },
    },
    async (request) => ({ object: 'template' as const, ...(await templates.updateTemplate(ctx, projectOf(request), request.params.id, request.body)) }),
  );

  app.delete(
    '/templates/:id',
    { schema: { summary: 'Delete a template', params: IdOrAlias, response: { 200: deleted('template') } } },
    async (request) => ({ object: 'template' as const, ...(await templates.deleteTemplate(ctx, projectOf(request), request.params.id)), deleted: true }),
  );

  app.post(
    '/templates/:id/publish',
    { schema: { summary: 'Publish the current version of a template', params: IdOrAlias, response: { 200: objectId('template') } } },
    async (request) => ({ object: 'template' as const, ...(await templates.publishTemplate(ctx, projectOf(request), request.params.id)) }),
  );

  app.post(
    '/templates/:id/duplicate',
    { schema: { summary: 'Copy a template into a new draft', params: IdOrAlias, response: { 200: objectId('template') } } },
    async (request) => ({ object: 'template' as const, ...(await templates.duplicateTemplate(ctx, projectOf(request), request.params.id)) }),
  );
}
