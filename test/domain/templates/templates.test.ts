import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, startApp, type TestApp } from '../../support/harness.ts';

const order = {
  name: 'order-confirmation',
  html: '<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p>',
  subject: 'Your {{{PRODUCT}}}',
  from: 'Acme Store <store@example.com>',
  replyTo: ['help@example.com', 'Sales <sales@example.com>'],
  variables: [
    { key: 'PRODUCT', type: 'string' as const, fallbackValue: 'item' },
    { key: 'PRICE', type: 'number' as const, fallbackValue: 25 },
  ],
};

// The SDK's type of a variable omits the id that Resend (and Mailroom) return.
const withId = (variable: unknown) => variable as { id: string; created_at: string; updated_at: string; fallback_value: unknown };

async function post(t: TestApp, path: string, body: unknown, method = 'POST') {
  const response = await t.fetch(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

for (const dialect of dialects) {
  describe(`templates (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates a draft with 201 {object, id}, readable by id and by alias in the shape of Resend', async () => {
      const raw = await post(t, '/templates', { name: 'welcome', html: '<p>Hi</p>', alias: 'welcome' });
      assert.equal(raw.status, 201);
      assert.deepEqual(Object.keys(raw.body).sort(), ['id', 'object']);
      assert.equal(raw.body.object, 'template');

      const { data, error } = await t.resend.templates.create({ ...order, alias: 'order' });
      assert.equal(error, null);
      const byId = (await t.resend.templates.get(data.id)).data!;
      const byAlias = (await t.resend.templates.get('order')).data!;
      assert.deepEqual(byAlias, byId);
      const { variables, created_at, updated_at, current_version_id, ...rest } = byId;
      assert.deepEqual(rest, {
        object: 'template',
        id: data.id,
        alias: 'order',
        name: 'order-confirmation',
        status: 'draft',
        published_at: null,
        from: 'Acme Store <store@example.com>',
        subject: 'Your {{{PRODUCT}}}',
        reply_to: ['help@example.com', 'Sales <sales@example.com>'],
        html: order.html,
        text: null,
        has_unpublished_versions: false,
      });
      assert.match(current_version_id, /^[0-9a-f-]{36}$/);
      assert.equal(created_at, updated_at);
      assert.match(created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/);
      assert.deepEqual(variables!.map((v) => { const { id: _, ...rest } = withId(v); return rest; }), [
        { key: 'PRODUCT', type: 'string', fallback_value: 'item', created_at, updated_at: created_at },
        { key: 'PRICE', type: 'number', fallback_value: 25, created_at, updated_at: created_at },
      ]);
      assert.ok(variables!.every((v) => /^[0-9a-f-]{36}$/.test(withId(v).id)));
    });

    it('requires name and html', async () => {
      const noName = await t.resend.templates.create({ html: '<p>x</p>' } as never);
      assert.deepEqual(noName.error, { statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
      const noHtml = await post(t, '/templates', { name: 'x' });
      assert.equal(noHtml.body.message, 'Missing `html` field.');
      const empty = await t.resend.templates.create({ name: 'x', html: '  ' });
      assert.equal(empty.error?.name, 'validation_error');
      assert.match(empty.error.message, /`html`/);
    });

    it('keeps aliases unique, even between requests racing for one', async () => {
      await t.resend.templates.create({ name: 'a', html: 'x', alias: 'taken' });
      const again = await t.resend.templates.create({ name: 'b', html: 'x', alias: 'taken' });
      assert.equal(again.error?.statusCode, 422);
      assert.match(again.error.message, /alias `taken` already exists/);

      const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => t.resend.templates.create({ name: `r${i}`, html: 'x', alias: 'raced' })));
      assert.equal(racing.filter((r) => r.error === null).length, 1);
      assert.ok(racing.every((r) => r.error === null || (r.error.statusCode === 422 && /already exists/.test(r.error.message))));

      const other = (await t.resend.templates.create({ name: 'c', html: 'x', alias: 'other' })).data!;
      const rename = await t.resend.templates.update(other.id, { alias: 'taken' });
      assert.equal(rename.error?.statusCode, 422);
      for (const alias of ['5f0c8f1e-4d3a-4b6e-9a55-0d7e0b5b1c2a', 'a/b', '', '.x', 'x'.repeat(101)]) {
        const bad = await t.resend.templates.create({ name: 'd', html: 'x', alias });
        assert.equal(bad.error?.statusCode, 422, alias);
        assert.match(bad.error.message, /`alias`/);
      }
    });

    it('checks from and reply_to as addresses', async () => {
      const from = await t.resend.templates.create({ name: 'x', html: 'x', from: 'not an address' });
      assert.match(from.error!.message, /`from`/);
      const replyTo = await t.resend.templates.create({ name: 'x', html: 'x', replyTo: ['a@example.com', 'nope'] });
      assert.match(replyTo.error!.message, /`reply_to\[1\]`/);
    });

    it('refuses variable keys that are not ASCII letters, digits and _, longer than 50, or reserved', async () => {
      const create = (key: string) => t.resend.templates.create({ name: 'v', html: 'x', variables: [{ key, type: 'string' }] });
      assert.equal((await create('K'.repeat(50))).error, null);
      assert.equal((await create('snake_Case_09')).error, null);
      for (const key of ['K'.repeat(51), 'with-dash', 'with space', 'dotted.key', 'é', '']) {
        const { error } = await create(key);
        assert.equal(error?.statusCode, 422, key);
        assert.match(error.message, /`variables\[0\]\.key`/);
      }
      for (const key of ['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'contact', 'this']) {
        const { error } = await create(key);
        assert.equal(error?.name, 'validation_error', key);
        assert.match(error.message, /reserved/);
      }
    });

    it('refuses bad types, fallbacks of the wrong type or size, duplicate keys and more than 50 variables', async () => {
      const create = (variables: unknown[]) => post(t, '/templates', { name: 'v', html: 'x', variables });
      const cases: [unknown[], RegExp][] = [
        [[{ key: 'A', type: 'boolean' }], /variables\[0\]\.type/],
        [[{ key: 'A', type: 'number', fallback_value: '3' }], /variables\[0\]\.fallback_value.*number/],
        [[{ key: 'A', type: 'string', fallback_value: 3 }], /variables\[0\]\.fallback_value.*string/],
        [[{ key: 'A', type: 'string', fallback_value: 'x'.repeat(2001) }], /2000/],
        [[{ key: 'A', type: 'number', fallback_value: Number.MAX_SAFE_INTEGER + 2 }], /2\^53/],
        [[{ key: 'A', type: 'string', fallback_value: true }], /variables\[0\]\.fallback_value/],
        [[{ key: 'A', type: 'string' }, { key: 'A', type: 'number' }], /variables\[1\]\.key.*twice/],
        [Array.from({ length: 51 }, (_, i) => ({ key: `V${i}`, type: 'string' })), /at most 50/],
        [[{ type: 'string' }], /Missing `variables\[0\]\.key`/],
      ];
      for (const [variables, message] of cases) {
        const { status, body } = await create(variables);
        assert.equal(status, 422, JSON.stringify(variables).slice(0, 80));
        assert.match(body.message, message);
      }
      const ok = await create([
        { key: 'S', type: 'string', fallback_value: 'x'.repeat(2000) },
        { key: 'N', type: 'number', fallback_value: Number.MAX_SAFE_INTEGER },
        { key: 'M', type: 'number', fallback_value: -4.5 },
        { key: 'Z', type: 'string', fallback_value: null },
        ...Array.from({ length: 46 }, (_, i) => ({ key: `V${i}`, type: 'string' })),
      ]);
      assert.equal(ok.status, 201);
    });

    it('publishes with create().publish(); edits of a published template wait in a new version until published again', async () => {
      const published = await t.resend.templates.create({ ...order, alias: 'versioned' }).publish();
      assert.equal(published.error, null);
      const id = published.data.id;
      assert.equal(published.data.object, 'template');
      const v1 = (await t.resend.templates.get(id)).data!;
      assert.equal(v1.status, 'published');
      assert.equal(v1.published_at, v1.updated_at);
      assert.equal(v1.has_unpublished_versions, false);

      t.advance(1000);
      const edit = await t.resend.templates.update('versioned', { html: '<p>v2 {{{PRODUCT}}}</p>', name: 'renamed' });
      assert.deepEqual(edit.data, { object: 'template', id });
      const v2 = (await t.resend.templates.get(id)).data!;
      assert.equal(v2.status, 'published');
      assert.equal(v2.has_unpublished_versions, true);
      assert.notEqual(v2.current_version_id, v1.current_version_id);
      assert.equal(v2.html, '<p>v2 {{{PRODUCT}}}</p>');
      assert.equal(v2.subject, v1.subject, 'the fields not given carry over to the new version');
      assert.equal(v2.name, 'renamed');
      assert.equal(v2.published_at, v1.published_at);
      assert.notEqual(v2.updated_at, v1.updated_at);
      assert.deepEqual(v2.variables, v1.variables, 'variables keep their ids');

      await t.resend.templates.update(id, { subject: 'v3' });
      const v3 = (await t.resend.templates.get(id)).data!;
      assert.equal(v3.current_version_id, v2.current_version_id, 'a draft version is edited in place');
      assert.equal(v3.html, v2.html);

      t.advance(1000);
      await t.resend.templates.publish(id);
      const v4 = (await t.resend.templates.get(id)).data!;
      assert.equal(v4.has_unpublished_versions, false);
      assert.equal(v4.current_version_id, v3.current_version_id);
      assert.notEqual(v4.published_at, v1.published_at);
      const versions = await t.ctx.db.selectFrom('template_versions').select('id').where('template_id', '=', id).execute();
      assert.deepEqual(versions.map((v) => v.id), [v4.current_version_id], 'the superseded version is gone');
    });

    it('concurrent edits of a published template start one draft between them, not one each', async () => {
      const { data } = await t.resend.templates.create({ name: 'busy', html: '<p>v1</p>' }).publish();
      const edits = await Promise.all(Array.from({ length: 8 }, (_, i) => t.resend.templates.update(data!.id, { html: `<p>edit ${i}</p>` })));
      assert.ok(edits.every((e) => e.error === null));
      const versions = await t.ctx.db.selectFrom('template_versions').select('id').where('template_id', '=', data!.id).execute();
      const template = (await t.resend.templates.get(data!.id)).data!;
      assert.equal(versions.length, 2, 'the published version and one draft');
      assert.ok(versions.some((v) => v.id === template.current_version_id));
      assert.match(template.html, /^<p>edit \d<\/p>$/);
    });

    it('updates: null clears an optional field, variables replace the list and keep the ids of kept keys', async () => {
      const { data } = await t.resend.templates.create({ ...order, text: 'Plain {{{PRODUCT}}}' });
      const before = (await t.resend.templates.get(data!.id)).data!;
      t.advance(1000);
      const cleared = await post(t, `/templates/${data!.id}`, { subject: null, text: null, reply_to: null, from: null }, 'PATCH');
      assert.equal(cleared.status, 200);
      await t.resend.templates.update(data!.id, { variables: [{ key: 'PRICE', type: 'number', fallbackValue: 30 }, { key: 'NEW', type: 'string' }] });
      const after = (await t.resend.templates.get(data!.id)).data!;
      assert.deepEqual([after.subject, after.text, after.reply_to, after.from], [null, null, null, null]);
      assert.equal(after.html, before.html);
      const price = withId(after.variables!.find((v) => v.key === 'PRICE'));
      const oldPrice = withId(before.variables!.find((v) => v.key === 'PRICE'));
      assert.equal(price.id, oldPrice.id);
      assert.equal(price.created_at, oldPrice.created_at);
      assert.notEqual(price.updated_at, oldPrice.updated_at);
      assert.equal(price.fallback_value, 30);
      assert.deepEqual(after.variables!.map((v) => v.key), ['PRICE', 'NEW']);
      const bad = await t.resend.templates.update(data!.id, { variables: [{ key: 'EMAIL', type: 'string' }] });
      assert.match(bad.error!.message, /reserved/);
    });

    it('duplicates into a new draft without the alias, chainable with .publish()', async () => {
      const source = (await t.resend.templates.create({ ...order, alias: 'to-copy', text: 'T' }).publish()).data!;
      const copy = await t.resend.templates.duplicate('to-copy');
      assert.equal(copy.data!.object, 'template');
      assert.notEqual(copy.data!.id, source.id);
      const [a, b] = [(await t.resend.templates.get(source.id)).data!, (await t.resend.templates.get(copy.data!.id)).data!];
      assert.equal(b.name, 'order-confirmation (copy)');
      assert.equal(b.alias, null);
      assert.equal(b.status, 'draft');
      for (const field of ['html', 'text', 'subject', 'from', 'reply_to'] as const) assert.deepEqual(b[field], a[field], field);
      assert.deepEqual(b.variables!.map((v) => [v.key, v.type, v.fallback_value]), a.variables!.map((v) => [v.key, v.type, v.fallback_value]));
      assert.notEqual(withId(b.variables![0]).id, withId(a.variables![0]).id);
      const chained = await t.resend.templates.duplicate(source.id).publish();
      assert.equal((await t.resend.templates.get(chained.data!.id)).data!.status, 'published');
    });

    it('deletes by id or alias; unknown ids and aliases get 404 everywhere', async () => {
      const { data } = await t.resend.templates.create({ name: 'gone', html: 'x', alias: 'gone' });
      const removed = await t.resend.templates.remove('gone');
      assert.deepEqual(removed.data, { object: 'template', id: data!.id, deleted: true });
      const versions = await t.ctx.db.selectFrom('template_versions').select('id').where('template_id', '=', data!.id).execute();
      assert.equal(versions.length, 0);
      const missing = { statusCode: 404, name: 'not_found', message: 'Template not found' };
      for (const ref of [data!.id, 'gone', 'never-existed']) {
        assert.deepEqual((await t.resend.templates.get(ref)).error, missing);
        assert.deepEqual((await t.resend.templates.update(ref, { name: 'x' })).error, missing);
        assert.deepEqual((await t.resend.templates.publish(ref)).error, missing);
        assert.deepEqual((await t.resend.templates.duplicate(ref)).error, missing);
        assert.deepEqual((await t.resend.templates.remove(ref)).error, missing);
      }
    });

    it('is closed to sending_access keys', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const sender = new Resend(data!.token, { baseUrl: t.url });
      assert.equal((await sender.templates.list()).error?.name, 'restricted_api_key');
      assert.equal((await sender.templates.create({ name: 'x', html: 'x' })).error?.name, 'restricted_api_key');
    });
  });

  describe(`listing templates (${dialect})`, () => {
    let t: TestApp;
    const created: string[] = [];
    before(async () => {
      t = await startApp(dialect, { worker: false });
      for (let i = 0; i < 25; i++) created.push((await t.resend.templates.create({ name: `t${i}`, html: 'x', alias: `t-${i}` })).data!.id);
      await t.resend.templates.publish(created[24]!);
    });
    after(() => t.close());

    it('always paginates (20 by default), newest first, with the fields of a list item', async () => {
      const { data } = await t.resend.templates.list();
      assert.equal(data!.object, 'list');
      assert.equal(data!.has_more, true);
      assert.deepEqual(data!.data.map((d) => d.id), created.slice(5).reverse());
      const [newest] = data!.data;
      assert.deepEqual(Object.keys(newest!).sort(), ['alias', 'created_at', 'id', 'name', 'published_at', 'status', 'updated_at']);
      assert.equal(newest!.status, 'published');
      assert.equal(data!.data[1]!.status, 'draft');
      assert.equal(data!.data[1]!.published_at, null);
      const next = (await t.resend.templates.list({ limit: 10, after: data!.data.at(-1)!.id })).data!;
      assert.deepEqual(next.data.map((d) => d.id), created.slice(0, 5).reverse());
      assert.equal(next.has_more, false);
      assert.equal((await t.fetch('/templates?limit=101')).status, 422);
    });
  });
}
