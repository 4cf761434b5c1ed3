import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/harness.ts';

type Schema = Record<string, any>;

/** Every place in a schema that could make a request cost more than its route allows: unbounded strings, arrays and maps. */
function unbounded(schema: Schema | undefined, at: string): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  if (schema.type === 'string' && schema.enum === undefined && schema.const === undefined && schema.maxLength === undefined) found.push(at);
  if (schema.type === 'array' && schema.maxItems === undefined) found.push(`${at}[]`);
  const map = schema.additionalProperties ?? Object.values(schema.patternProperties ?? {})[0];
  if (schema.type === 'object' && typeof map === 'object' && schema.maxProperties === undefined) found.push(`${at}{}`);
  for (const [name, child] of Object.entries(schema.properties ?? {})) found.push(...unbounded(child as Schema, `${at}.${name}`));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) found.push(...unbounded(branch, at));
  if (schema.items) found.push(...unbounded(schema.items, `${at}[]`));
  if (typeof map === 'object') found.push(...unbounded(map, `${at}{}`));
  return found;
}

describe('request schemas', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp('sqlite', { worker: false });
  });
  after(() => t.close());

  it('bound every string, list and map a request can carry, on every route', () => {
    const document = t.app.swagger() as Schema;
    const found: string[] = [];
    for (const [path, operations] of Object.entries(document.paths as Schema)) {
      for (const [method, operation] of Object.entries(operations as Schema)) {
        const route = `${method.toUpperCase()} ${path}`;
        for (const parameter of operation.parameters ?? []) found.push(...unbounded(parameter.schema, `${route} ${parameter.in}:${parameter.name}`));
        for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
          found.push(...unbounded((content as Schema).schema, `${route} ${type}`));
        }
      }
    }
    assert.deepEqual(found, []);
  });
});
