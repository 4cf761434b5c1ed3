import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/harness.ts';

// No error message echoes more than about 100 characters of what a client sent, whichever field it was
// in: every body field and query parameter of every route given a value of 100,000 characters, and
// the fields whose names are the client's own (headers, properties, schemas, variables) such a name.

const LONG = 'Q'.repeat(100_000);
const SOME_ID = '0192e3a4-1111-7000-8000-000000000000';

type Schema = Record<string, any>;

describe('error messages with long input', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp('sqlite', { worker: false });
  });
  after(() => t.close());

  /** Sends a request; fails naming it if the answer's message echoes more than 100 characters of LONG. */
  async function check(method: string, path: string, body?: unknown): Promise<number> {
    const response = await t.fetch(path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const message = response.status >= 400 ? String((JSON.parse(text) as { message: unknown }).message) : '';
    assert.ok(!message.includes('Q'.repeat(101)), `${method} ${path.slice(0, 80)} ${JSON.stringify(body)?.slice(0, 80)} echoed ${message.length} characters`);
    return response.status;
  }

  it('echoes at most 100 characters of a long value, in every body field and query parameter of every route', async () => {
    const document = t.app.swagger() as Schema;
    let refused = 0;
    for (const [template, operations] of Object.entries(document.paths as Schema)) {
      const path = template.replace(/\{[^}]+\}/g, SOME_ID);
      for (const [method, operation] of Object.entries(operations as Schema)) {
        if (method === 'delete' || !['get', 'post', 'patch', 'put'].includes(method)) continue;
        for (const parameter of (operation.parameters ?? []) as Schema[]) {
          if (parameter.in === 'query') refused += Number((await check(method.toUpperCase(), `${path}?${parameter.name}=${LONG}`)) >= 400);
        }
        const schema = operation.requestBody?.content?.['application/json']?.schema as Schema | undefined;
        for (const name of Object.keys(schema?.properties ?? {})) {
          refused += Number((await check(method.toUpperCase(), path, { [name]: LONG })) >= 400);
        }
      }
    }
    assert.ok(refused > 200, `${refused} refusals read`);
  });

  it('echoes at most 100 characters of a long name of the client’s own, or a long path', async () => {
    const email = { from: 'a@example.com', to: 'b@example.com', subject: 's', text: 't' };
    assert.equal(await check('POST', '/emails', { ...email, headers: { [LONG]: 'v' } }), 422);
    assert.equal(await check('POST', '/emails/batch', [{ ...email, headers: { [`X-${LONG}`]: 'v' } }]), 422);
    assert.equal(await check('POST', '/emails', { ...email, template: { id: LONG.slice(0, 200) } }), 422);
    assert.equal(await check('POST', '/contacts', { email: 'c@example.com', properties: { [LONG]: 1 } }), 422);
    assert.equal(await check('POST', '/events', { name: 'e', schema: { [LONG]: 'string' } }), 422);
    assert.equal(await check('POST', '/events', { name: 'e', schema: { [LONG]: 'nothing' } }), 422);
    const steps = [{ key: 'start', type: 'trigger', config: { event_name: 'e' } }];
    assert.equal(await check('POST', '/automations', { name: 'a', steps, connections: [{ from: LONG, to: 'start' }] }), 422);
    assert.equal(await check('PUT', `/emails/${LONG.slice(0, 5000)}`), 405);
  });
});
