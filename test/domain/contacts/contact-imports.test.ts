import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { ContactImport } from 'resend';
import { configEnv, runByHand, dialects, eventually, outliveKilledWorkers, requestJson, rowCount, startApp, startWorker, type TestApp } from '../../support/harness.ts';

const csv = (lines: string[]) => new Blob([lines.join('\n')], { type: 'text/csv' });

async function finished(t: TestApp, id: string, timeoutMs = 30_000): Promise<ContactImport> {
  return eventually(async () => {
    const { data } = await t.resend.contacts.imports.get(id);
    return data && (data.status === 'completed' || data.status === 'failed') ? data : undefined;
  }, timeoutMs);
}

async function upload(t: TestApp, fields: Record<string, string | Blob>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const response = await t.fetch('/contacts/imports', { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as any };
}

for (const dialect of dialects) {
  describe(`contact imports (${dialect})`, () => {
    let t: TestApp;
    let segment: string;
    let topic: string;
    before(async () => {
      t = await startApp(dialect);
      segment = (await t.resend.segments.create({ name: 'Imported' })).data!.id;
      topic = (await t.resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' })).data!.id;
      await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      await t.resend.contactProperties.create({ key: 'seats', type: 'number' });
    });
    after(() => t.close());

    it('imports a CSV through the SDK: mapped columns, properties, segments and topics, with counts', async () => {
      const lines = ['Email,Given,Family,Plan,Seats,Opted out'];
      for (let i = 0; i < 4500; i++) lines.push(`person${i}@example.com,Given${i},Family${i},pro,${i},${i === 7 ? 'yes' : 'no'}`);
      const { data, error } = await t.resend.contacts.imports.create({
        file: csv(lines),
        columnMap: {
          email: 'Email',
          firstName: 'Given',
          lastName: 'Family',
          unsubscribed: 'Opted out',
          properties: { plan: { column: 'Plan' }, seats: { column: 'Seats', type: 'number' } },
        },
        segments: [{ id: segment }],
        topics: [{ id: topic, subscription: 'opt_in' }],
      });
      assert.equal(error, null);
      assert.equal(data.object, 'contact_import');
      const done = await finished(t, data.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.counts, { total: 4500, created: 4500, updated: 0, skipped: 0, failed: 0 });
      assert.match(done.completed_at!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);

      const { data: contact } = await t.resend.contacts.get('person7@example.com');
      assert.deepEqual([contact!.first_name, contact!.last_name, contact!.unsubscribed], ['Given7', 'Family7', true]);
      assert.deepEqual(contact!.properties, { plan: { value: 'pro', type: 'string' }, seats: { value: 7, type: 'number' } });
      const members = await t.resend.contacts.list({ segmentId: segment });
      assert.equal(members.data!.data.length, 4500);
      const topics = await t.resend.contacts.topics.list({ email: 'person8@example.com' });
      assert.equal(topics.data!.data[0]!.subscription, 'opt_in');
    });

    it('skips existing contacts by default, and upserts them with the cells that have a value', async () => {
      await t.resend.contacts.create({ email: 'keep@example.com', firstName: 'Kept', lastName: 'Name', properties: { plan: 'free' } });
      const rows = ['email,first_name,last_name,plan', 'keep@example.com,New,,pro', 'fresh@example.com,Fresh,,'];
      const later = (await t.resend.segments.create({ name: 'Later' })).data!.id;
      const columnMap = { properties: { plan: { column: 'plan' } } };
      const skip = await t.resend.contacts.imports.create({ file: csv(rows), columnMap, segments: [{ id: later }] });
      assert.deepEqual((await finished(t, skip.data!.id)).counts, { total: 2, created: 1, updated: 0, skipped: 1, failed: 0 });
      assert.equal((await t.resend.contacts.get('keep@example.com')).data!.first_name, 'Kept');
      const members = (await t.resend.contacts.list({ segmentId: later })).data!.data.map((c) => c.email);
      assert.deepEqual(members, ['fresh@example.com'], 'a skipped contact is left wholly untouched');

      const upsert = await t.resend.contacts.imports.create({ file: csv(rows), onConflict: 'upsert', columnMap });
      assert.deepEqual((await finished(t, upsert.data!.id)).counts, { total: 2, created: 0, updated: 2, skipped: 0, failed: 0 });
      const { data: kept } = await t.resend.contacts.get('keep@example.com');
      const fields = [kept!.first_name, kept!.last_name, kept!.properties.plan?.value];
      assert.deepEqual(fields, ['New', 'Name', 'pro'], 'an empty cell keeps the value');
    });

    it('counts rows without a valid email, or with a value not of its type, as failed; a repeated email as existing', async () => {
      const rows = [
        'email,seats,unsubscribed',
        'ok1@example.com,1,false',
        'not-an-email,2,false',
        ',3,false',
        'ok2@example.com,many,false',
        'ok3@example.com,4,perhaps',
        'OK1@example.com,5,true',
        '',
      ];
      const columnMap = { properties: { seats: { column: 'seats' } } };
      const skip = await t.resend.contacts.imports.create({ file: csv(rows), columnMap });
      assert.deepEqual((await finished(t, skip.data!.id)).counts, { total: 6, created: 1, updated: 0, skipped: 1, failed: 4 });
      const upsert = await t.resend.contacts.imports.create({ file: csv(rows), columnMap, onConflict: 'upsert' });
      assert.deepEqual((await finished(t, upsert.data!.id)).counts, { total: 6, created: 0, updated: 2, skipped: 0, failed: 4 });
      const { data } = await t.resend.contacts.get('ok1@example.com');
      assert.deepEqual([data!.unsubscribed, data!.properties.seats?.value], [true, 5], 'the later row wins');
    });

    it('fails an import whose CSV cannot be parsed', async () => {
      const { data } = await t.resend.contacts.imports.create({ file: csv(['email,name', 'a@example.com,"unclosed']) });
      const done = await finished(t, data!.id);
      assert.equal(done.status, 'failed');
      assert.notEqual(done.completed_at, null);
      const pieces = await t.ctx.db.selectFrom('contact_import_chunks').select('position').where('import_id', '=', data!.id).execute();
      assert.deepEqual(pieces, [], 'the CSV is dropped once the import ends');
    });

    it('refuses a form it cannot import with a clear 4xx, before storing anything', async () => {
      const before = await t.resend.contacts.imports.list({ limit: 100 });
      const file = csv(['email,name', 'a@example.com,A']);
      const cases: [Record<string, string | Blob>, number, RegExp][] = [
        [{ column_map: '{}' }, 422, /Missing `file` field/],
        [{ file: csv(['name', 'A']) }, 422, /`column_map\.email`.*no "email" column/],
        [{ file: csv([]) }, 422, /`file`.*empty/],
        [{ file, column_map: JSON.stringify({ first_name: 'Given' }) }, 422, /`column_map\.first_name`.*no column "Given"/],
        [{ file, column_map: JSON.stringify({ properties: { shoe: { column: 'name' } } }) }, 422, /`column_map\.properties\.shoe`/],
        [
          { file, column_map: JSON.stringify({ properties: { seats: { column: 'name', type: 'string' } } }) },
          422,
          /`column_map\.properties\.seats\.type`/,
        ],
        [{ file, column_map: '{not json' }, 422, /`column_map`.*JSON/],
        [{ file, on_conflict: 'merge' }, 422, /`on_conflict`/],
        [{ file, segments: JSON.stringify([{ id: 'nope' }]) }, 422, /`segments\[0\]`/],
        [{ file, topics: JSON.stringify([{ id: topic, subscription: 'sure' }]) }, 422, /`topics\[0\]\.subscription`/],
        [{ file, topics: JSON.stringify([{ id: 'nope', subscription: 'opt_in' }]) }, 422, /`topics\[0\]\.id`/],
      ];
      for (const [fields, status, message] of cases) {
        const response = await upload(t, fields);
        assert.equal(response.status, status, JSON.stringify(Object.keys(fields)));
        assert.match(response.body.message, message);
      }
      const json = await requestJson(t, 'POST', '/contacts/imports', {});
      assert.equal(json.status, 415);
      assert.match(json.body.message, /`Content-Type: multipart\/form-data`; this request's Content-Type is "application\/json"/);
      const after = await t.resend.contacts.imports.list({ limit: 100 });
      assert.equal(after.data!.data.length, before.data!.data.length);
    });

    it('takes a CSV of 50 MB, and refuses a larger one with 413', async () => {
      const limit = 50 * 1024 * 1024;
      const fits = Buffer.alloc(limit, '\n');
      fits.write('email\nlast@example.com\n');
      const accepted = await t.resend.contacts.imports.create({ file: new Blob([fits]) });
      assert.equal(accepted.error, null);
      const done = await finished(t, accepted.data.id, 60_000);
      assert.deepEqual([done.status, done.counts.created], ['completed', 1]);
      const over = await upload(t, { file: new Blob([fits, '\n']) });
      assert.equal(over.status, 413);
      assert.equal(over.body.name, 'validation_error');
    });

    it('imports a CSV sent as a plain form field (no filename) whole, past a megabyte', async () => {
      const rows = Array.from({ length: 30_000 }, (_, i) => `plain-field-${String(i).padStart(6, '0')}@example.com,Name`);
      const text = ['email,first_name', ...rows].join('\n');
      assert.ok(text.length > 1024 * 1024);
      const { status, body } = await upload(t, { file: text });
      assert.equal(status, 201);
      const done = await finished(t, body.id, 120_000);
      assert.deepEqual([done.status, done.counts.total, done.counts.created], ['completed', 30_000, 30_000]);
      const over = await upload(t, { file: 'x'.repeat(50 * 1024 * 1024 + 1) });
      assert.equal(over.status, 413);
    });

    it('needs a full-access key, like every route outside sending (the upload route has a scope of its own)', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const form = new FormData();
      form.append('file', csv(['email', 'a@example.com']));
      const headers = { authorization: `Bearer ${data!.token}` };
      const response = await fetch(`${t.url}/contacts/imports`, { method: 'POST', headers, body: form });
      assert.equal(response.status, 401);
      assert.equal(((await response.json()) as { name: string }).name, 'restricted_api_key');
    });

    it('lists imports newest first, by status; an unknown import is 404', async () => {
      const { data } = await t.resend.contacts.imports.list({ limit: 2 });
      assert.equal(data!.data.length, 2);
      assert.equal(data!.has_more, true);
      const failed = await t.resend.contacts.imports.list({ status: 'failed' });
      assert.ok(failed.data!.data.length >= 1);
      assert.ok(failed.data!.data.every((i) => i.status === 'failed'));
      assert.deepEqual((await t.resend.contacts.imports.get('01a2007a-0000-7000-8000-000000000000')).error, {
        statusCode: 404,
        name: 'not_found',
        message: 'Contact import not found',
      });
    });
  });

  describe(`contact imports across a crash (${dialect})`, () => {
    it('resumes after the worker is killed mid-import, losing and doubling no row, with progress shown meanwhile', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        const segment = (await t.resend.segments.create({ name: 'Crash' })).data!.id;
        const rows = 50_000;
        const lines = ['email'];
        for (let i = 0; i < rows; i++) lines.push(`crash${i}@example.com`);
        const { data } = await t.resend.contacts.imports.create({ file: csv(lines), segments: [{ id: segment }] });
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'worker'], {
          env: { ...process.env, ...configEnv(t.ctx) },
          stdio: 'ignore',
        });
        const midway = await eventually(async () => {
          const { data: state } = await t.resend.contacts.imports.get(data!.id);
          return state!.counts.total > 0 ? state : undefined;
        }, 60_000);
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
        assert.equal(midway!.status, 'in_progress');
        const { data: atCrash } = await t.resend.contacts.imports.get(data!.id);
        assert.equal(atCrash!.status, 'in_progress', 'the worker died mid-import');
        assert.ok(atCrash!.counts.total < rows);
        assert.equal(await rowCount(t, 'contacts'), atCrash!.counts.total, 'progress and rows were committed together');

        // Once the dead worker's heartbeat is stale, another worker takes its job over.
        outliveKilledWorkers(t);
        const second = await startWorker(t);
        try {
          const done = await finished(t, data!.id, 60_000);
          assert.equal(done.status, 'completed');
          assert.deepEqual(done.counts, { total: rows, created: rows, updated: 0, skipped: 0, failed: 0 });
        } finally {
          await second.stop();
        }
        assert.equal(await rowCount(t, 'contacts'), rows);
        assert.equal(await rowCount(t, 'segment_contacts'), rows);
      } finally {
        await t.close();
      }
    });

    it('a worker whose job was taken over by another stops at its next chunk without writing', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        const { data } = await t.resend.contacts.imports.create({ file: csv(['email', 'one@example.com', 'two@example.com']) });
        await t.ctx.db.updateTable('jobs').set({ locked_by: 'worker-b', locked_at: t.clock.now(), attempts: 1 }).execute();
        const job = await t.ctx.db.selectFrom('jobs').selectAll().executeTakeFirstOrThrow();
        await runByHand(t.ctx, job, 'worker-a');
        assert.equal(await rowCount(t, 'contacts'), 0);
        assert.equal((await t.resend.contacts.imports.get(data!.id)).data!.counts.total, 0);
        const after = await t.ctx.db.selectFrom('jobs').select(['locked_by']).executeTakeFirstOrThrow();
        assert.equal(after.locked_by, 'worker-b', 'the job is left to the worker that holds it');

        await runByHand(t.ctx, job);
        const { data: done } = await t.resend.contacts.imports.get(data!.id);
        assert.deepEqual(done!.counts, { total: 2, created: 2, updated: 0, skipped: 0, failed: 0 });
      } finally {
        await t.close();
      }
    });
  });
}
