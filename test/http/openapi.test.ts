import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { startApp, type TestApp } from '../support/harness.ts';

type Schema = Record<string, any>;

const PUBLIC = [
  'GET /.well-known/mta-sts.txt', 'GET /downloads/{kind}/{id}', 'GET /health', 'GET /track/click/{*}', 'GET /track/open/{*}', 'GET /unsubscribe/{token}',
  'POST /feedback/mailgun', 'POST /feedback/postmark', 'POST /feedback/sendgrid', 'POST /feedback/ses', 'POST /unsubscribe/{token}',
];

/** Every operation of the document, as `METHOD /path`. */
function operations(document: Schema): [string, Schema][] {
  return Object.entries(document.paths as Schema).flatMap(([path, methods]) =>
    Object.entries(methods as Schema).map(([method, operation]): [string, Schema] => [`${method.toUpperCase()} ${path}`, operation]),
  );
}

describe('the OpenAPI document', () => {
  let t: TestApp;
  let document: Schema;
  before(async () => {
    t = await startApp('sqlite', { worker: false, env: { MAILROOM_PUBLIC_URL: 'https://mail.example.com/' } });
    document = (await (await fetch(`${t.url}/openapi.json`)).json()) as Schema;
  });
  after(() => t.close());

  it('is a valid OpenAPI 3 document, naming the server at the public URL', async () => {
    const result = await validate(structuredClone(document) as never);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
    assert.match(document.openapi, /^3\./);
    assert.deepEqual(document.servers, [{ url: 'https://mail.example.com' }]);
  });

  it('asks for the API key on every operation but the public ones, and for the admin key on /projects, as the API does', async () => {
    assert.deepEqual(document.security, [{ bearerAuth: [] }]);
    const open: string[] = [];
    const admin: string[] = [];
    for (const [name, operation] of operations(document)) {
      if (operation.security?.length === 0) open.push(name);
      else if (operation.security !== undefined) {
        assert.deepEqual(operation.security, [{ adminKey: [] }], name);
        admin.push(name);
      }
      // The document tells the truth: without a key, a secured operation answers 401 and a public one does not.
      const [method, path] = name.split(' ') as [string, string];
      const url = path.replace(/\{[^}]+\}/g, '0192e3a4-1111-7000-8000-000000000000');
      const response = await fetch(`${t.url}${url}`, { method });
      await response.arrayBuffer();
      assert.equal(response.status === 401, operation.security?.length !== 0, `${name} answered ${response.status}`);
    }
    assert.deepEqual(open.sort(), PUBLIC);
    assert.deepEqual(admin.sort(), ['DELETE /projects/{id}', 'GET /projects', 'GET /projects/{id}', 'PATCH /projects/{id}', 'POST /projects']);
  });

  it('lists Mailroom’s own /projects routes beside Resend’s, with their bodies and answers', () => {
    assert.ok(document.paths['/emails'].post, 'Resend’s routes are there');
    assert.ok(document.components.securitySchemes.adminKey.description.includes('MAILROOM_ADMIN_KEY'));
    const create = document.paths['/projects'].post;
    assert.deepEqual(create.tags, ['Mailroom: projects']);
    assert.match(create.summary, /shown only here/);
    const body = create.requestBody.content['application/json'].schema;
    assert.deepEqual(Object.keys(body.properties), ['name', 'rate_limit', 'daily_quota', 'monthly_quota', 'smtp_url']);
    assert.deepEqual(body.required, ['name']);
    const created = create.responses['201'].content['application/json'].schema;
    assert.deepEqual(created.required, ['object', 'id', 'name', 'api_key']);
    assert.deepEqual(created.properties.api_key.required, ['id', 'token']);
    const list = document.paths['/projects'].get.responses['200'].content['application/json'].schema;
    const project = list.properties.data.items;
    assert.deepEqual(project.required, ['object', 'id', 'name', 'rate_limit', 'daily_quota', 'monthly_quota', 'has_smtp_url', 'created_at']);
    assert.equal(project.properties.smtp_url, undefined, 'a relay URL is never answered');
    assert.deepEqual(document.paths['/projects/{id}'].get.responses['200'].content['application/json'].schema.required, project.required);
    assert.deepEqual(Object.keys(document.paths['/projects/{id}'].patch.requestBody.content['application/json'].schema.properties), Object.keys(body.properties));
    const force = document.paths['/projects/{id}'].delete.parameters.find((parameter: Schema) => parameter.name === 'force');
    assert.equal(force.in, 'query');
    assert.deepEqual(document.paths['/projects/{id}'].delete.responses['200'].content['application/json'].schema.required, ['object', 'id', 'deleted']);
    assert.ok(document.tags.some((tag: Schema) => tag.name === 'Mailroom: projects'));
  });

  it("declares Resend's error body for 4XX and 5XX on every operation; the unsubscribe page's errors are html", () => {
    assert.deepEqual(document.components.schemas.ErrorBody.required, ['statusCode', 'name', 'message']);
    const count = operations(document).length;
    assert.ok(count > 50, `${count} operations`);
    for (const [name, operation] of operations(document)) {
      for (const status of ['4XX', '5XX']) {
        const content = operation.responses[status]?.content;
        if (name.includes('/unsubscribe/')) assert.deepEqual(Object.keys(content), ['text/html'], `${name} ${status}`);
        else assert.deepEqual(content, { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } }, `${name} ${status}`);
      }
    }
  });

  it('shows the multipart form of POST /contacts/imports and the form bodies of one-click unsubscribe', () => {
    const imports = document.paths['/contacts/imports'].post.requestBody.content;
    assert.deepEqual(Object.keys(imports), ['multipart/form-data']);
    const form = imports['multipart/form-data'].schema;
    assert.deepEqual(Object.keys(form.properties), ['file', 'column_map', 'on_conflict', 'segments', 'topics']);
    assert.deepEqual(form.required, ['file']);
    assert.equal(form.properties.file.format, 'binary');

    const oneClick = document.paths['/unsubscribe/{token}'].post.requestBody.content;
    assert.deepEqual(Object.keys(oneClick), ['application/x-www-form-urlencoded', 'multipart/form-data']);
    for (const type of Object.keys(oneClick)) assert.ok(oneClick[type].schema.properties['List-Unsubscribe'], type);
  });

  it('shows both answers of GET /emails/{id}/raw: JSON, and the message itself', () => {
    const content = document.paths['/emails/{id}/raw'].get.responses['200'].content;
    assert.deepEqual(Object.keys(content), ['application/json', 'message/rfc822']);
    assert.equal(content['message/rfc822'].schema.format, 'binary');
  });

  it('describes every route of the API, the newest among them, each with a summary', () => {
    const documented = new Set(operations(document).map(([name]) => name));
    // The route table's paths as OpenAPI writes them: `{id}` for `:id(pattern)`.
    const asOpenApi = (url: string) => url.replace(/\([^)]*\)/g, '').replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{*}');
    // The dashboard's pages and the share links' are html for people, not API.
    const api = t.app.routeTable.filter((r) => r.method !== 'HEAD' && !/^\/(dashboard|shared)(\/|$)/.test(r.url) && !['/', '/favicon.ico', '/openapi.json', '/metrics'].includes(r.url));
    const missing = api.map((r) => `${r.method} ${asOpenApi(r.url)}`).filter((name) => !documented.has(name));
    assert.deepEqual(missing, []);
    for (const name of [
      'GET /webhooks',
      'GET /broadcasts/{id}/metrics',
      'GET /broadcasts/metrics',
      'GET /segments/metrics',
      'POST /domains/{id}/tracking',
      'GET /domains/{id}/tracking',
      'GET /domains/{id}/tracking/{tracking_id}',
      'PATCH /domains/{id}/tracking/{tracking_id}',
      'DELETE /domains/{id}/tracking/{tracking_id}',
      'POST /domains/{id}/tracking/{tracking_id}/verify',
      'GET /automations/{id}/runs/{run_id}/steps',
      'GET /automations/{id}/runs/{run_id}/steps/{step_id}',
      'POST /email',
      'POST /emails/sending',
      'POST /email/sending',
      'POST /feedback/ses',
      'POST /feedback/postmark',
      'POST /feedback/mailgun',
      'POST /feedback/sendgrid',
    ]) {
      assert.ok(documented.has(name), name);
      const [method, path] = name.split(' ') as [string, string];
      assert.ok(document.paths[path][method.toLowerCase()].summary, `${name} has a summary`);
    }
    const webhookRow = document.paths['/webhooks'].get.responses['200'].content['application/json'].schema.properties.data.items;
    assert.deepEqual(['object', 'signing_secret'].filter((field) => webhookRow.required.includes(field)), ['object', 'signing_secret']);
  });
});
