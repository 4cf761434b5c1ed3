import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as imports from '../../domain/contacts/contact-imports.ts';
import { projectOf } from '../auth.ts';
import { SegmentRefs, TopicRefs } from '../schemas/contacts.ts';
import { unsupportedMediaType } from '../error-handler.ts';
import { AppError, invalidField } from '../../errors.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { IdParams, listOfSchema, Map, MAX, Nullable, objectId, Str, UUID } from '../schemas/common.ts';
import { compileCheck } from '../validation.ts';

const ImportStatus = Type.Enum(['queued', 'in_progress', 'completed', 'failed']);

const ContactImport = Type.Object({
  object: Type.Literal('contact_import'),
  id: Type.String(),
  status: ImportStatus,
  created_at: Type.String(),
  completed_at: Nullable(Type.String()),
  counts: Type.Object({
    total: Type.Integer(),
    created: Type.Integer(),
    updated: Type.Integer(),
    skipped: Type.Integer(),
    failed: Type.Integer(),
  }),
});

// The form's JSON fields, once parsed: `column_map`, `segments` and `topics` arrive as JSON text.
const ImportFields = Type.Object({
  column_map: Type.Optional(
    Type.Object({
      email: Type.Optional(Str(MAX.short)),
      first_name: Type.Optional(Str(MAX.short)),
      last_name: Type.Optional(Str(MAX.short)),
      unsubscribed: Type.Optional(Str(MAX.short)),
      properties: Type.Optional(Map(Type.Object({ column: Str(MAX.short), type: Type.Optional(Str(MAX.short)) }), 1000)),
    }),
  ),
  on_conflict: Type.Optional(Str(MAX.short)),
  segments: Type.Optional(SegmentRefs),
  topics: Type.Optional(TopicRefs),
});
const checkFields = compileCheck<Omit<imports.ImportInput, 'file'>>(ImportFields);

const JSON_FIELDS = new Set(['column_map', 'segments', 'topics']);

/** The form as the OpenAPI document shows it (Resend's): it is read part by part, never validated whole as a body. */
const ImportForm = Type.Object({
  file: Type.String({ format: 'binary', maxLength: imports.MAX_IMPORT_BYTES, description: 'The CSV, as a file or a plain field; at most 50 MB' }),
  column_map: Type.Optional(
    Str(imports.MAX_IMPORT_BYTES, 'JSON: {email, first_name, last_name, unsubscribed, properties: {key: {column, type}}}, each a column name'),
  ),
  on_conflict: Type.Optional(Type.Enum(['skip', 'upsert'], { default: 'skip', description: 'What to do with an email that exists' })),
  segments: Type.Optional(Str(imports.MAX_IMPORT_BYTES, 'JSON: [{id}], the segments every imported contact joins')),
  topics: Type.Optional(Str(imports.MAX_IMPORT_BYTES, 'JSON: [{id, subscription}], set on every imported contact')),
});

/** Reads the multipart form: the CSV (as a file, or as a plain field) and the other fields. */
async function readImportForm(request: FastifyRequest): Promise<imports.ImportInput> {
  if (!request.isMultipart()) throw unsupportedMediaType(request);
  let file: Buffer | undefined;
  const fields: Record<string, unknown> = {};
  // A CSV sent as a plain field (no filename) may be as large as one sent as a file; a field cut at the
  // limit is refused, never imported in part.
  const limits = { fileSize: imports.MAX_IMPORT_BYTES, fieldSize: imports.MAX_IMPORT_BYTES, files: 1, fields: 10 };
  for await (const part of request.parts({ limits })) {
    if (part.type === 'file') {
      const content = await part.toBuffer();
      if (part.fieldname === 'file') file = content;
    } else if (part.valueTruncated) {
      throw new AppError('payload_too_large', `The \`${part.fieldname}\` field is larger than the 50 MB an import accepts.`);
    } else if (part.fieldname === 'file') {
      file = Buffer.from(String(part.value));
    } else if (JSON_FIELDS.has(part.fieldname)) {
      try {
        fields[part.fieldname] = JSON.parse(String(part.value));
      } catch {
        throw invalidField(part.fieldname, 'expected JSON.');
      }
    } else {
      fields[part.fieldname] = part.value;
    }
  }
  const checked = checkFields(fields);
  if ('error' in checked) throw checked.error;
  return { ...checked.value, file };
}

export function contactImportRoutes(app: App, ctx: Context): void {
  // Multipart is read by this route only, in a scope of its own.
  void app.register(async (scope) => {
    await scope.register(multipart);
    scope.post(
      '/contacts/imports',
      {
        config: { swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: ImportForm }, url }) },
        schema: {
          summary: 'Import contacts from a CSV (multipart/form-data: file, column_map, on_conflict, segments, topics; at most 50 MB)',
          consumes: ['multipart/form-data'],
          response: { 201: objectId('contact_import') },
        },
      },
      async (request, reply) => {
        const { id } = await imports.createImport(ctx, projectOf(request), await readImportForm(request));
        return reply.status(201).send({ object: 'contact_import' as const, id });
      },
    );
  });

  app.get(
    '/contacts/imports',
    {
      schema: {
        summary: 'List contact imports (always paginated)',
        querystring: Type.Object({ ...PageQuery.properties, status: Type.Optional(ImportStatus) }),
        response: { 200: listOfSchema(ContactImport) },
      },
    },
    async (request) => listOf(await imports.listImports(ctx, projectOf(request), request.query.status, parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/contacts/imports/:id${UUID}`,
    { schema: { summary: 'Retrieve a contact import: its status and counts', params: IdParams, response: { 200: ContactImport } } },
    async (request) => imports.getImport(ctx, projectOf(request), request.params.id),
  );
}
