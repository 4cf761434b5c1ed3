// Projects (docs/projects.md): broadcasts and contact imports are their project's. Another project's
// broadcast or import answers as a missing one, a broadcast or import naming another project's segment
// or topic is refused as naming a missing one, and what they write (emails, contacts) lands in their
// own project, read from their own project's contacts only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resend } from 'resend';
import { cookiesOf, csrfField, postForm, signIn } from '../support/dashboard-forms.ts';
import { dialects, eventually, type TestApp } from '../support/harness.ts';
import { MISSING_ID, startTwoProjects } from '../support/projects.ts';

const content = (project: string) => ({ from: `News <news@${project}-news.example>`, subject: `${project} news`, html: `<p>${project} news</p>` });
const csv = (lines: string[]) => new Blob([lines.join('\n')], { type: 'text/csv' });

/** An error with the id it names replaced, to compare a foreign id's answer with a missing id's. */
const shapeOf = (error: { statusCode: number | null; name: string; message: string } | null, id: string) =>
  error && { statusCode: error.statusCode, name: error.name, message: error.message.replace(id, '<id>') };

for (const dialect of dialects) {
  describe(`projects: broadcasts and contact imports (${dialect})`, () => {
    let t: TestApp;
    let a: Resend;
    let b: Resend;
    let bId: string;
    let bToken: string;
    /** A's and B's segment and topic, of the same names. */
    let aSegment: string;
    let aTopic: string;
    let bSegment: string;
    let bTopic: string;
    /** A's draft, which B tries to reach. */
    let aDraft: string;

    /** A request with B's key; the status and JSON answer. */
    const asB = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${t.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${bToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    before(async () => {
      ({ t, a, b, bId, bToken } = await startTwoProjects(dialect));
      const setUp = async (client: Resend, prefix: string) => {
        const segment = (await client.segments.create({ name: 'News' })).data!.id;
        const topic = (await client.topics.create({ name: 'Updates', defaultSubscription: 'opt_out' })).data!.id;
        for (const name of ['one', 'two']) {
          await client.contacts.create({ email: `${prefix}-${name}@example.org`, firstName: `${prefix} ${name}`, segments: [{ id: segment }], topics: [{ id: topic, subscription: 'opt_in' }] });
        }
        return { segment, topic };
      };
      ({ segment: aSegment, topic: aTopic } = await setUp(a, 'a'));
      ({ segment: bSegment, topic: bTopic } = await setUp(b, 'b'));
      aDraft = (await a.broadcasts.create({ ...content('a'), name: 'A draft', segmentId: aSegment })).data!.id;
    });
    after(() => t.close());

    it('answers B for A’s broadcast exactly as for a missing one: not listed, read, updated, sent, canceled, copied or deleted', async () => {
      assert.deepEqual((await b.broadcasts.list()).data!.data, []);
      const missing = await b.broadcasts.get(MISSING_ID);
      const foreign = await b.broadcasts.get(aDraft);
      assert.equal(foreign.error?.statusCode, 404);
      assert.deepEqual(foreign.error, missing.error);
      const calls: [string, (id: string) => Promise<{ error: unknown }>][] = [
        ['update', (id) => b.broadcasts.update(id, { name: 'taken', subject: 'B was here' })],
        ['send', (id) => b.broadcasts.send(id)],
        ['cancel', (id) => b.broadcasts.cancel(id)],
        ['duplicate', (id) => b.broadcasts.duplicate(id)],
        ['remove', (id) => b.broadcasts.remove(id)],
        ['recipients', (id) => b.broadcasts.recipients(id, { type: 'delivered' } as never)],
        ['clicked links', (id) => b.broadcasts.clickedLinks(id)],
      ];
      for (const [name, call] of calls) assert.deepEqual((await call(aDraft)).error, (await call(MISSING_ID)).error, name);
      const metrics = [await asB('GET', `/broadcasts/${aDraft}/metrics`), await asB('GET', `/broadcasts/${MISSING_ID}/metrics`)];
      assert.deepEqual(metrics[0], metrics[1]);
      assert.equal(metrics[0]!.status, 404);
      const still = (await a.broadcasts.get(aDraft)).data!;
      assert.deepEqual([still.status, still.name, still.subject], ['draft', 'A draft', 'a news'], 'A’s draft is unchanged');
      assert.deepEqual((await b.broadcasts.list()).data!.data, [], 'B copied nothing');
      assert.deepEqual((await a.broadcasts.list()).data!.data.map((row) => row.id), [aDraft]);
    });

    it('refuses B a broadcast naming A’s segment or topic as naming a missing one', async () => {
      const foreign = await b.broadcasts.create({ ...content('b'), segmentId: aSegment });
      const missing = await b.broadcasts.create({ ...content('b'), segmentId: MISSING_ID });
      assert.equal(foreign.error?.statusCode, 422);
      assert.deepEqual(shapeOf(foreign.error, aSegment), shapeOf(missing.error, MISSING_ID));
      const topic = await b.broadcasts.create({ ...content('b'), segmentId: bSegment, topicId: aTopic });
      assert.deepEqual(shapeOf(topic.error, aTopic), shapeOf((await b.broadcasts.create({ ...content('b'), segmentId: bSegment, topicId: MISSING_ID })).error, MISSING_ID));
      const draft = (await b.broadcasts.create({ ...content('b'), segmentId: bSegment })).data!.id;
      assert.equal((await b.broadcasts.update(draft, { segmentId: aSegment })).error?.statusCode, 422);
      assert.equal((await b.broadcasts.get(draft)).data!.segment_id, bSegment);
      assert.equal((await b.broadcasts.remove(draft)).error, null);
      assert.deepEqual((await b.broadcasts.list()).data!.data, []);
    });

    it('sends each project’s broadcast to its own segment’s contacts only, its emails written in its project', async () => {
      const sent = {
        a: (await a.broadcasts.create({ ...content('a'), segmentId: aSegment, topicId: aTopic, send: true })).data!.id,
        b: (await b.broadcasts.create({ ...content('b'), segmentId: bSegment, topicId: bTopic, send: true })).data!.id,
      };
      await eventually(async () => (await a.broadcasts.get(sent.a)).data?.status === 'sent' && (await b.broadcasts.get(sent.b)).data?.status === 'sent');
      const written = await t.ctx.db.selectFrom('emails').select(['broadcast_id', 'project_id', 'to']).where('broadcast_id', 'in', [sent.a, sent.b]).execute();
      const of = (id: string) => written.filter((row) => row.broadcast_id === id);
      assert.deepEqual(of(sent.a).map((row) => JSON.parse(row.to)[0]).sort(), ['a-one@example.org', 'a-two@example.org']);
      assert.deepEqual(of(sent.b).map((row) => JSON.parse(row.to)[0]).sort(), ['b-one@example.org', 'b-two@example.org']);
      assert.ok(of(sent.b).every((row) => row.project_id === bId) && of(sent.a).every((row) => row.project_id !== bId));
      const listed = async (client: Resend) => (await client.emails.list()).data!.data.map((email) => email.to[0]).sort();
      assert.deepEqual(await listed(b), ['b-one@example.org', 'b-two@example.org'], 'B lists its broadcast’s emails, not A’s');
      assert.deepEqual(await listed(a), ['a-one@example.org', 'a-two@example.org']);
      const shown = (await b.emails.list()).data!.data[0]!;
      assert.match((await b.emails.get(shown.id)).data!.html!, /b news/, 'B’s broadcast email renders from B’s broadcast');
      assert.equal((await b.broadcasts.recipients(sent.a, { type: 'sent' } as never)).error?.statusCode, 404);
    });

    it('keeps the dashboard’s broadcast pages to the session’s project', async () => {
      const session = cookiesOf(await signIn(t, bToken));
      const page = async (path: string) => {
        const response = await fetch(`${t.url}/dashboard${path}`, { headers: { cookie: session } });
        return { status: response.status, text: await response.text() };
      };
      const list = await page('/broadcasts');
      assert.equal(list.status, 200);
      assert.match(list.text, /b news|\(no name\)/);
      assert.doesNotMatch(list.text, /A draft/);
      assert.equal((await page(`/broadcasts/${aDraft}`)).status, 404);
      assert.equal((await page(`/broadcasts/${aDraft}/html`)).status, 404);
      const csrf = csrfField(list.text);
      for (const verb of ['send', 'cancel']) {
        const response = await postForm(t, `/dashboard/broadcasts/${aDraft}/${verb}`, { _csrf: csrf }, session);
        assert.equal(response.status, 404, verb);
      }
      assert.equal((await a.broadcasts.get(aDraft)).data!.status, 'draft');
    });

    it('imports B’s CSV into B only, refuses A’s segment, and answers B for A’s import as for a missing one', async () => {
      const aImport = (await a.contacts.imports.create({ file: csv(['email', 'a-imported@example.org']), segments: [{ id: aSegment }] })).data!.id;
      const lines = ['email,first_name', 'b-imported1@example.org,Bea', 'b-imported2@example.org,Bo', 'a-one@example.org,Hijack'];
      const bImport = (await b.contacts.imports.create({ file: csv(lines), segments: [{ id: bSegment }], onConflict: 'upsert' })).data!.id;
      const finished = (client: Resend, id: string) =>
        eventually(async () => {
          const { data } = await client.contacts.imports.get(id);
          return data && (data.status === 'completed' || data.status === 'failed') ? data : undefined;
        });
      const done = await finished(b, bImport);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.counts, { total: 3, created: 3, updated: 0, skipped: 0, failed: 0 }, 'an address A has is B’s own contact in B');
      assert.equal((await finished(a, aImport)).status, 'completed');

      const emails = async (client: Resend) => (await client.contacts.list()).data!.data.map((contact) => contact.email).sort();
      assert.deepEqual(await emails(b), ['a-one@example.org', 'b-imported1@example.org', 'b-imported2@example.org', 'b-one@example.org', 'b-two@example.org']);
      assert.equal((await b.contacts.get({ email: 'a-one@example.org' })).data!.first_name, 'Hijack');
      assert.deepEqual(await emails(a), ['a-imported@example.org', 'a-one@example.org', 'a-two@example.org']);
      const aOne = (await a.contacts.get({ email: 'a-one@example.org' })).data!;
      assert.equal(aOne.first_name, 'a one', 'A’s contact is unchanged');
      const rows = await t.ctx.db.selectFrom('contacts').select(['email', 'project_id']).where('email', 'like', 'b-imported%').execute();
      assert.deepEqual(rows.map((row) => row.project_id), [bId, bId]);

      const missing = await b.contacts.imports.get(MISSING_ID);
      const foreign = await b.contacts.imports.get(aImport);
      assert.equal(foreign.error?.statusCode, 404);
      assert.deepEqual(foreign.error, missing.error);
      assert.deepEqual((await b.contacts.imports.list()).data!.data.map((row) => row.id), [bImport]);
      assert.deepEqual((await a.contacts.imports.list()).data!.data.map((row) => row.id), [aImport]);
      const refused = await b.contacts.imports.create({ file: csv(['email', 'b-x@example.org']), segments: [{ id: aSegment }] });
      const refusedMissing = await b.contacts.imports.create({ file: csv(['email', 'b-x@example.org']), segments: [{ id: MISSING_ID }] });
      assert.equal(refused.error?.statusCode, 422);
      assert.deepEqual(shapeOf(refused.error, aSegment), shapeOf(refusedMissing.error, MISSING_ID));
    });
  });
}
