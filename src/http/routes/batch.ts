import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { MAX_BATCH, sendBatch, type BatchEntry, type BatchValidation } from '../../domain/emails/batch.ts';
import type { SendHeaders } from '../../domain/emails/emails.ts';
import { AppError } from '../../errors.ts';
import { idempotencyOf } from '../idempotency-key.ts';
import type { SendEmailInput } from '../../domain/emails/email-input.ts';
import { IdempotencyHeaders, SendEmailBody, Str } from '../schemas/common.ts';
import { compileCheck } from '../validation.ts';

/** 100 emails without attachments: room for about 100 KB of html each. */
const BATCH_BODY_LIMIT = 10 * 1024 * 1024;

const BatchBody = Type.Array(SendEmailBody, {
  minItems: 1,
  maxItems: MAX_BATCH,
  description: `1 to ${MAX_BATCH} POST /emails payloads, without attachments or scheduled_at`,
});

const checkEntry = compileCheck<SendEmailInput>(SendEmailBody);

// The schema above documents the route; the request is read here instead, entry by entry, so that
// permissive mode can store the valid entries and report the others.
function readEntries(body: unknown): BatchEntry[] {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BATCH) {
    throw new AppError('validation_error', `The request body must be an array of 1 to ${MAX_BATCH} emails.`);
  }
  return body.map(checkEntry);
}

const BatchResponse = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String() })),
  errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer(), message: Type.String() }))),
});

function batchValidation(header: string | string[] | undefined): BatchValidation {
  if (header === undefined || header === 'strict') return 'strict';
  if (header === 'permissive') return 'permissive';
  throw new AppError('validation_error', 'The `x-batch-validation` header must be "strict" or "permissive".');
}

export function batchRoutes(app: App, ctx: Context): void {
  app.post(
    '/emails/batch',
    {
      bodyLimit: BATCH_BODY_LIMIT,
      config: { access: 'sending' },
      schema: {
        summary: 'Send up to 100 emails in one request',
        headers: Type.Object({
          ...IdempotencyHeaders.properties,
          'x-batch-validation': Type.Optional(Str(16, '"strict" (default) or "permissive"')),
        }),
        body: BatchBody,
        response: { 200: BatchResponse },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const validation = batchValidation(request.headers['x-batch-validation']);
      const entries = readEntries(request.body);
      const headers: SendHeaders = {};
      // The mode is part of the request: the same emails sent strict and permissive are two requests.
      const sent = await sendBatch(ctx, entries, validation, request.apiKey!, idempotencyOf(request, '/emails/batch', `${validation}:`), headers);
      return reply.headers(headers).send(sent);
    },
  );
}
