// What was unique across the install is unique within a project (migration 35, docs/projects.md): two
// projects each have a contact jane@example.com, a property `plan`, a template alias `welcome`, a
// suppression of one address and a custom event `signed_up`, each its own; a second within one project
// is refused as it always was.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { Resend } from 'resend';
import { isUniqueViolation } from '../../src/store/db.ts';
import { DEFAULT_PROJECT_ID } from '../../src/store/projects.ts';
import { insertSuppression } from '../../src/store/suppressions.ts';
import { newId } from '../../src/time/ids.ts';
import { dialects, type TestApp } from '../support/harness.ts';
import { startTwoProjects } from '../support/projects.ts';

for (const dialect of dialects) {
  describe(`unique within a project (${dialect})`, () => {
    let t: TestApp;
    let a: Resend;
    let b: Resend;
    let bId: string;
    let bToken: string;

    before(async () => {
      ({ t, a, b, bId, bToken } = await startTwoProjects(dialect, { worker: false }));
    });
    after(() => t.close());

    /** PATCH /contacts/:id with a new email, through `token`'s project (the SDK changes no email). */
    async function changeEmail(token: string, id: string, email: string) {
      const response = await fetch(`${t.url}/contacts/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      return { status: response.status, body: (await response.json()) as any };
    }

    it('gives each project its own contact jane@example.com; a second in one project is the same contact', async () => {
      const inA = (await a.contacts.create({ email: 'jane@example.com', firstName: 'Jane A' })).data!;
      const inB = (await b.contacts.create({ email: 'Jane@Example.com', firstName: 'Jane B' })).data!;
      assert.ok(inA.id && inB.id && inA.id !== inB.id);
      assert.equal((await a.contacts.get('jane@example.com')).data?.id, inA.id);
      assert.equal((await b.contacts.get('jane@example.com')).data?.id, inB.id);

      assert.ok((await a.contacts.update({ email: 'jane@example.com', firstName: 'Janet' })).data?.id);
      assert.equal((await a.contacts.get(inA.id)).data?.first_name, 'Janet');
      assert.equal((await b.contacts.get(inB.id)).data?.first_name, 'Jane B', 'B’s contact is as it was');

      // Within one project, as before: creating it again answers the same contact, unchanged.
      assert.equal((await a.contacts.create({ email: 'jane@example.com', firstName: 'Other' })).data?.id, inA.id);
      assert.equal((await a.contacts.get(inA.id)).data?.first_name, 'Janet');
      // A contact of B may take an address A holds, but not one another contact of B holds.
      const bob = (await b.contacts.create({ email: 'bob@example.com' })).data!;
      const clash = await changeEmail(bToken, bob.id, 'jane@example.com');
      assert.deepEqual([clash.status, clash.body.name], [422, 'validation_error']);
      assert.match(clash.body.message, /Another contact has the email/);
      const anns = (await a.contacts.create({ email: 'ann@example.com' })).data!;
      assert.equal((await changeEmail(bToken, bob.id, 'ann@example.com')).status, 200);
      assert.equal((await b.contacts.get('ann@example.com')).data?.id, bob.id);
      assert.equal((await a.contacts.get('ann@example.com')).data?.id, anns.id);
    });

    it('gives each project its own property `plan`, of its own type; a second in one project is refused', async () => {
      const inA = (await a.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' })).data!;
      const inB = (await b.contactProperties.create({ key: 'plan', type: 'number', fallbackValue: 0 })).data!;
      assert.ok(inA.id && inB.id && inA.id !== inB.id);

      await a.contactProperties.update({ id: inA.id, fallbackValue: 'trial' });
      assert.equal((await a.contactProperties.get(inA.id)).data?.fallbackValue, 'trial');
      assert.deepEqual([(await b.contactProperties.get(inB.id)).data?.type, (await b.contactProperties.get(inB.id)).data?.fallbackValue], ['number', 0]);

      // Each project's contacts take values of its own property's type.
      const janeA = (await a.contacts.create({ email: 'plan@example.com', properties: { plan: 'pro' } })).data!;
      const janeB = (await b.contacts.create({ email: 'plan@example.com', properties: { plan: 3 } })).data!;
      assert.deepEqual((await a.contacts.get(janeA.id)).data?.properties, { plan: { value: 'pro', type: 'string' } });
      assert.deepEqual((await b.contacts.get(janeB.id)).data?.properties, { plan: { value: 3, type: 'number' } });

      const again = await a.contactProperties.create({ key: 'plan', type: 'string' });
      assert.deepEqual([again.error?.statusCode, again.error?.name], [422, 'validation_error']);
      assert.match(again.error!.message, /exists already/);
    });

    it('gives each project its own template alias `welcome`; a second in one project is refused', async () => {
      const inA = (await a.templates.create({ name: 'A welcome', html: '<p>A</p>', alias: 'welcome' })).data!;
      const inB = (await b.templates.create({ name: 'B welcome', html: '<p>B</p>', alias: 'welcome' })).data!;
      assert.ok(inA.id && inB.id && inA.id !== inB.id);
      assert.equal((await a.templates.get('welcome')).data?.id, inA.id);
      assert.equal((await b.templates.get('welcome')).data?.id, inB.id);

      assert.ok((await a.templates.update('welcome', { name: 'A hello' })).data?.id);
      assert.equal((await a.templates.get(inA.id)).data?.name, 'A hello');
      assert.equal((await b.templates.get(inB.id)).data?.name, 'B welcome', 'B’s template is as it was');

      const again = await a.templates.create({ name: 'A again', html: '<p>x</p>', alias: 'welcome' });
      assert.deepEqual([again.error?.statusCode, again.error?.name], [422, 'validation_error']);
      assert.match(again.error!.message, /alias `welcome` already exists/);
      const other = (await b.templates.create({ name: 'B other', html: '<p>x</p>' })).data!;
      const renamed = await b.templates.update(other.id, { alias: 'welcome' });
      assert.deepEqual([renamed.error?.statusCode, renamed.error?.name], [422, 'validation_error']);
    });

    // Suppressions and custom events are scoped by their own areas; here, what the tables and the upsert take.
    it('keeps a suppression of one address and a custom event `signed_up` per project in the database', async () => {
      const at = '2026-01-02 03:04:05.678+00';
      const suppression = (project: string) => ({ id: newId(), project_id: project, email: 'gone@example.com', origin: 'manual' as const, source_id: null, created_at: at });
      const added = await t.ctx.db.transaction().execute(async (tx) => [
        await insertSuppression(tx, suppression(DEFAULT_PROJECT_ID)),
        await insertSuppression(tx, suppression(bId)),
        await insertSuppression(tx, suppression(bId)),
      ]);
      assert.deepEqual(added, [true, true, false], 'once in each project; the second in B is the entry B has');

      const db = t.ctx.db as unknown as Kysely<any>;
      const event = (project: string) => ({ id: newId(), project_id: project, name: 'signed_up', schema: null, created_at: at, updated_at: null });
      await db.insertInto('custom_events').values(event(DEFAULT_PROJECT_ID)).execute();
      await db.insertInto('custom_events').values(event(bId)).execute();
      await assert.rejects(db.insertInto('custom_events').values(event(bId)).execute(), isUniqueViolation);
      const names = await db.selectFrom('custom_events').select('project_id').where('name', '=', 'signed_up').execute();
      assert.deepEqual(names.map((row) => row.project_id).sort(), [DEFAULT_PROJECT_ID, bId].sort());
    });
  });
}
