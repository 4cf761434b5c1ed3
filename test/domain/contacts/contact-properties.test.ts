import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

for (const dialect of dialects) {
  describe(`contact properties (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates, reads, lists, updates the fallback of, and deletes properties through the SDK', async () => {
      const created = await requestJson(t, 'POST', '/contact-properties', { key: 'company_name', type: 'string', fallback_value: 'Acme' });
      assert.equal(created.status, 201);
      assert.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
      const id = created.body.id as string;
      const seats = await t.resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 });
      assert.equal(seats.data!.object, 'contact_property');

      const { data: got } = await t.resend.contactProperties.get(id);
      const { createdAt, ...rest } = got!;
      assert.match(createdAt, /\+00$/);
      assert.deepEqual(rest, { object: 'contact_property', id, key: 'company_name', type: 'string', fallbackValue: 'Acme' });
      const { body: raw } = await requestJson(t, 'GET', `/contact-properties/${seats.data!.id}`);
      assert.deepEqual(Object.keys(raw).sort(), ['created_at', 'fallback_value', 'id', 'key', 'object', 'type']);
      assert.equal(raw.fallback_value, 1);

      const list = await t.resend.contactProperties.list();
      assert.deepEqual(list.data!.data.map((p) => p.key), ['seats', 'company_name']);

      const updated = await t.resend.contactProperties.update({ id, fallbackValue: 'Initech' });
      assert.deepEqual(updated.data, { object: 'contact_property', id });
      assert.equal((await t.resend.contactProperties.get(id)).data!.fallbackValue, 'Initech');
      await t.resend.contactProperties.update({ id, fallbackValue: null });
      assert.equal((await t.resend.contactProperties.get(id)).data!.fallbackValue, null);

      assert.deepEqual((await t.resend.contactProperties.remove(id)).data, { object: 'contact_property', id, deleted: true });
      const gone = await t.resend.contactProperties.get(id);
      assert.deepEqual(gone.error, { statusCode: 404, name: 'not_found', message: 'Contact property not found' });
      assert.equal((await t.resend.contactProperties.remove(id)).error?.statusCode, 404);
    });

    it('enforces Resend’s key rules, the two types, a fallback of the type, and a fixed key and type', async () => {
      const bad = [
        [{ type: 'string' }, 'missing_required_field', /`key`/],
        [{ key: 'plan' }, 'missing_required_field', /`type`/],
        [{ key: 'has space', type: 'string' }, 'validation_error', /`key`/],
        [{ key: 'dash-ed', type: 'string' }, 'validation_error', /`key`/],
        [{ key: 'k'.repeat(51), type: 'string' }, 'validation_error', /`key`/],
        [{ key: 'flag', type: 'boolean' }, 'validation_error', /`type`/],
        [{ key: 'n', type: 'number', fallback_value: 'three' }, 'validation_error', /`fallback_value`/],
        [{ key: 's', type: 'string', fallback_value: 3 }, 'validation_error', /`fallback_value`/],
      ] as const;
      for (const [body, name, message] of bad) {
        const response = await requestJson(t, 'POST', '/contact-properties', body);
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.equal(response.body.name, name);
        assert.match(response.body.message, message);
      }
      assert.equal((await t.resend.contactProperties.create({ key: 'k'.repeat(50), type: 'string' })).error, null);
      const plan = await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      assert.equal((await t.resend.contactProperties.create({ key: 'plan', type: 'string' })).error?.statusCode, 422, 'keys are unique');
      assert.equal((await t.resend.contactProperties.create({ key: 'Plan', type: 'number' })).error, null, 'keys are case-sensitive');
      assert.equal((await requestJson(t, 'PATCH', `/contact-properties/${plan.data!.id}`, { type: 'number' })).status, 422);
      assert.equal((await requestJson(t, 'PATCH', `/contact-properties/${plan.data!.id}`, { key: 'other' })).status, 422);
      assert.equal((await t.resend.contactProperties.update({ id: plan.data!.id, fallbackValue: 5 })).error?.statusCode, 422);
    });

    it('refuses an unknown property or a value of the wrong type on a contact with 422, and drops values with their property', async () => {
      const { data } = await t.resend.contactProperties.create({ key: 'age', type: 'number' });
      const unknown = await t.resend.contacts.create({ email: 'p@example.com', properties: { nickname: 'x' } });
      assert.equal(unknown.error?.statusCode, 422);
      assert.match(unknown.error.message, /`properties\.nickname`/);
      const wrong = await t.resend.contacts.create({ email: 'p@example.com', properties: { age: 'forty' } });
      assert.equal(wrong.error?.statusCode, 422);
      assert.match(wrong.error.message, /`properties\.age`.*number/);
      const boolean = await requestJson(t, 'POST', '/contacts', { email: 'p@example.com', properties: { age: true } });
      assert.equal(boolean.status, 422);

      const contact = await t.resend.contacts.create({ email: 'p@example.com', properties: { age: 40 } });
      assert.equal((await t.resend.contacts.update({ email: 'p@example.com', properties: { age: '41' } })).error?.statusCode, 422);
      assert.equal((await t.resend.contacts.update({ email: 'p@example.com', properties: { shoe: 41 } })).error?.statusCode, 422);
      assert.deepEqual((await t.resend.contacts.get(contact.data!.id)).data!.properties, { age: { value: 40, type: 'number' } });

      await t.resend.contactProperties.remove(data!.id);
      assert.deepEqual((await t.resend.contacts.get(contact.data!.id)).data!.properties, {});
    });
  });
}
