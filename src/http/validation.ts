import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import { fromSchemaErrors, type SchemaError } from './error-handler.ts';
import type { AppError } from '../errors.ts';

// Fastify's own Ajv options: no type coercion in bodies, full error context for the messages.
const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: true, verbose: true, allErrors: false });

/** Compiles a schema into a check that answers the value, or the AppError a request would get. */
export function compileCheck<T>(schema: TSchema): (value: unknown) => { value: T } | { error: AppError } {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value) =>
    validate(value) ? { value } : { error: fromSchemaErrors(validate.errors as SchemaError[], 'body') };
}
