import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { nothingLeftToDo } from '../../support/jobs.ts';

const MISSING = '01a2007a-0000-7000-8000-000000000000';
const content = { from: 'Acme <news@example.com>', subject: 'Hello {{{contact.first_name|there}}}', html: '<p>Hi {{{FIRST_NAME|there}}}</p>' };
const wrongState = (message: string) => ({ statusCode: 403, name: 'validation_error', message });

async function status(t: TestApp, id: string): Promise<string> {
  return (await t.resend.broadcasts.get(id)).data!.status;
}

async function jobCount(t: TestApp): Promise<number> {
  const rows = await t.ctx.db.selectFrom('jobs').select('key').where('task', '=', 'send-broadcast').execute();
  return rows.length;
}

for (const dialect of dialects) {
  describe(`broadcasts: drafts and the API (${dialect})`, () => {
    let t: TestApp;
    let segment: string;
    let topic: string;
    before(async () => {
      // No worker: whatever is sent stays queued or scheduled, for the state checks.
      t = await startApp(dialect, { worker: false });
      segment = (await t.resend.segments.create({ name: 'News' })).data!.id;
      topic = (await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_in' })).data!.id;
    });
    after(() => t.close());

    it('creates a draft (201 {id}) and shows it with every field of Resend\'s broadcast object', async () => {
      const created = await requestJson(t, 'POST', '/broadcasts', {
        segment_id: segment,
        name: 'November',
        from: 'Acme <news@example.com>',
        subject: 'Hello',
        reply_to: 'help@example.com',
        preview_text: 'Our news',
        html: '<p>Hi</p>',
        text: 'Hi',
        topic_id: topic,
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.object, 'broadcast');
      const { data, error } = await t.resend.broadcasts.get(created.body.id);
      assert.equal(error, null);
      assert.deepEqual(data, {
        object: 'broadcast',
        id: created.body.id,
        name: 'November',
        audience_id: segment,
        segment_id: segment,
        from: 'Acme <news@example.com>',
        subject: 'Hello',
        reply_to: ['help@example.com'],
        preview_text: 'Our news',
        html: '<p>Hi</p>',
        text: 'Hi',
        status: 'draft',
        created_at: data.created_at,
        scheduled_at: null,
        sent_at: null,
        topic_id: topic,
      });
      assert.match(data.created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);
      assert.equal(await jobCount(t), 0, 'a draft has no job');
    });

    it('takes the legacy audience_id, reply_to as an array, and defaults the optional fields to null', async () => {
      const { data } = await t.resend.broadcasts.create({ audienceId: segment, ...content, replyTo: ['a@example.com', 'B <b@example.com>'] });
      const { data: broadcast } = await t.resend.broadcasts.get(data!.id);
      assert.equal(broadcast!.segment_id, segment);
      assert.deepEqual(broadcast!.reply_to, ['a@example.com', 'B <b@example.com>']);
      assert.deepEqual([broadcast!.name, broadcast!.preview_text, broadcast!.text, broadcast!.topic_id], [null, null, null, null]);
    });

    it('refuses what is missing or wrong with 422 naming the field', async () => {
      const onlyWithSend = 'Invalid `scheduled_at` field: can only be used together with `send: true`.';
      const notADate = 'Invalid `scheduled_at` field: "whenever" is not a date; use ISO 8601 or natural language such as "in 1 min".';
      const badFrom = 'Invalid `from` field: "x" is not a valid email address; use `email@example.com` or `Name <email@example.com>`.';
      const ok = { segment_id: segment, ...content };
      const cases: [object, string, string][] = [
        [{ from: 'a@example.com', subject: 's', html: 'x' }, 'missing_required_field', 'Missing `segment_id` field.'],
        [{ segment_id: segment, subject: 's', html: 'x' }, 'missing_required_field', 'Missing `from` field.'],
        [{ segment_id: segment, from: 'a@example.com', html: 'x' }, 'missing_required_field', 'Missing `subject` field.'],
        [{ segment_id: segment, from: 'a@example.com', subject: 's' }, 'missing_required_field', 'Missing `html` or `text` field.'],
        [{ ...ok, segment_id: MISSING }, 'validation_error', `Invalid \`segment_id\` field: there is no segment with id "${MISSING}".`],
        [{ ...content, audience_id: MISSING }, 'validation_error', `Invalid \`audience_id\` field: there is no segment with id "${MISSING}".`],
        [{ ...ok, topic_id: MISSING }, 'validation_error', `Invalid \`topic_id\` field: there is no topic with id "${MISSING}".`],
        [{ ...ok, from: 'x' }, 'validation_error', badFrom],
        [{ ...ok, scheduled_at: 'in 1 hour' }, 'validation_error', onlyWithSend],
        [{ ...ok, send: false, scheduled_at: 'in 1 hour' }, 'validation_error', onlyWithSend],
        [{ ...ok, send: true, scheduled_at: 'whenever' }, 'validation_error', notADate],
        [{ ...ok, send: 'yes' }, 'validation_error', 'Invalid `send` field: must be boolean.'],
      ];
      for (const [body, name, message] of cases) {
        const response = await requestJson(t, 'POST', '/broadcasts', body);
        assert.deepEqual(response, { status: 422, body: { statusCode: 422, name, message } }, JSON.stringify(body));
      }
    });

    it('lists every broadcast when limit is omitted (an older endpoint), and pages with limit', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await t.resend.broadcasts.create({ segmentId: segment, ...content, name: `L${i}` })).data!.id);
      const { data } = await t.resend.broadcasts.list();
      const listed = data!.data.map((b) => b.id);
      assert.equal(data!.has_more, false);
      assert.deepEqual(listed.slice(0, 3), [...ids].reverse(), 'newest first');
      assert.deepEqual(Object.keys(data!.data[0]!).sort(), ['audience_id', 'created_at', 'id', 'name', 'scheduled_at', 'segment_id', 'sent_at', 'status', 'topic_id']);
      const page = await t.resend.broadcasts.list({ limit: 2 });
      assert.deepEqual(page.data!.data.map((b) => b.id), [ids[2], ids[1]]);
      assert.equal(page.data!.has_more, true);
      const next = await t.resend.broadcasts.list({ limit: 2, after: ids[1]! });
      assert.equal(next.data!.data[0]!.id, ids[0]);
    });

    it('updates a draft; once sent, only its name changes (403 otherwise)', async () => {
      const { id } = (await t.resend.broadcasts.create({ segmentId: segment, ...content })).data!;
      const updated = await t.resend.broadcasts.update(id, { subject: 'New subject', replyTo: ['r@example.com'], topicId: topic, name: 'Draft' });
      assert.deepEqual(updated.data, { object: 'broadcast', id });
      const { data } = await t.resend.broadcasts.get(id);
      assert.deepEqual([data!.subject, data!.reply_to, data!.topic_id, data!.name], ['New subject', ['r@example.com'], topic, 'Draft']);
      assert.equal((await requestJson(t, 'PATCH', `/broadcasts/${id}`, { topic_id: null })).status, 200);
      assert.equal((await t.resend.broadcasts.get(id)).data!.topic_id, null, 'null clears an optional field');
      assert.equal((await t.resend.broadcasts.update(id, { segmentId: MISSING })).error?.statusCode, 422);

      await t.resend.broadcasts.send(id);
      const refused = await t.resend.broadcasts.update(id, { subject: 'Too late' });
      assert.deepEqual(
        refused.error,
        wrongState('Only draft broadcasts can be edited; once a broadcast is sent or scheduled, only its `name` can change.'),
      );
      assert.deepEqual((await t.resend.broadcasts.update(id, { name: 'Renamed' })).data, { object: 'broadcast', id });
      const after = (await t.resend.broadcasts.get(id)).data!;
      assert.deepEqual([after.name, after.subject], ['Renamed', 'New subject']);
      assert.equal((await t.resend.broadcasts.update(MISSING, { name: 'x' })).error?.statusCode, 404);
    });

    it('sends with POST /send: a draft becomes queued, with its fan-out job; a second send is refused', async () => {
      const { id } = (await t.resend.broadcasts.create({ segmentId: segment, ...content })).data!;
      assert.equal(await status(t, id), 'draft');
      const sent = await t.resend.broadcasts.send(id);
      assert.deepEqual(sent.data, { object: 'broadcast', id });
      assert.equal(await status(t, id), 'queued');
      const job = await t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', `send-broadcast:${id}`).executeTakeFirstOrThrow();
      assert.equal(job.run_at, t.clock.now());
      const emails = await t.ctx.db.selectFrom('emails').select('id').where('broadcast_id', '=', id).execute();
      assert.deepEqual(emails, [], 'the fan-out is left to the worker: the request writes no email');
      assert.deepEqual((await t.resend.broadcasts.send(id)).error, wrongState('Only draft broadcasts can be sent; this one has been sent or scheduled already.'));
      assert.equal((await t.resend.broadcasts.send(MISSING)).error?.message, 'Broadcast not found');
    });

    it('schedules with POST /send {scheduled_at} and with create {send, scheduled_at}: the job waits until then', async () => {
      const { id } = (await t.resend.broadcasts.create({ segmentId: segment, ...content })).data!;
      await t.resend.broadcasts.send(id, { scheduledAt: 'in 2 hours' });
      const scheduled = (await t.resend.broadcasts.get(id)).data!;
      assert.equal(scheduled.status, 'scheduled');
      const job = await t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', `send-broadcast:${id}`).executeTakeFirstOrThrow();
      assert.equal(job.run_at, t.clock.now() + 2 * 3600 * 1000);
      assert.equal(Date.parse(scheduled.scheduled_at!.replace(' ', 'T').replace('+00', 'Z')), job.run_at);

      const created = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: '2099-01-01T00:00:00Z' });
      assert.equal(created.error?.message, 'Invalid `scheduled_at` field: must be at most 30 days in the future.');
      const at = new Date(t.clock.now() + 86_400_000).toISOString();
      const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: at });
      assert.equal(await status(t, data!.id), 'scheduled');
    });

    it('cancels a scheduled broadcast back to draft and a queued one for good; anything else answers 403', async () => {
      const { id: scheduled } = (await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: 'in 1 hour' })).data!;
      assert.deepEqual((await t.resend.broadcasts.cancel(scheduled)).data, { object: 'broadcast', id: scheduled });
      const draft = (await t.resend.broadcasts.get(scheduled)).data!;
      assert.deepEqual([draft.status, draft.scheduled_at], ['draft', null]);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `send-broadcast:${scheduled}`).executeTakeFirst(), undefined);
      await t.resend.broadcasts.send(scheduled);
      assert.equal(await status(t, scheduled), 'queued', 'a draft that was scheduled can be sent again');

      const { id: queued } = (await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true })).data!;
      assert.equal(await status(t, queued), 'queued');
      await t.resend.broadcasts.cancel(queued);
      assert.equal(await status(t, queued), 'canceled');
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `send-broadcast:${queued}`).executeTakeFirst(), undefined);
      const message = 'Only queued or scheduled broadcasts can be canceled';
      assert.deepEqual((await t.resend.broadcasts.cancel(queued)).error, wrongState(message));
      assert.deepEqual((await t.resend.broadcasts.send(queued)).error?.statusCode, 403, 'a canceled broadcast cannot be sent');
      const { id: draftId } = (await t.resend.broadcasts.create({ segmentId: segment, ...content })).data!;
      assert.deepEqual((await t.resend.broadcasts.cancel(draftId)).error, wrongState(message));
      assert.equal((await t.resend.broadcasts.cancel(MISSING)).error?.statusCode, 404);
    });

    it('deletes drafts and scheduled broadcasts (with their job), and nothing else', async () => {
      const { id: draft } = (await t.resend.broadcasts.create({ segmentId: segment, ...content })).data!;
      assert.deepEqual((await t.resend.broadcasts.remove(draft)).data, { object: 'broadcast', id: draft, deleted: true });
      assert.equal((await t.resend.broadcasts.get(draft)).error?.message, 'Broadcast not found');

      const { id: scheduled } = (await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: 'in 1 day' })).data!;
      assert.equal((await t.resend.broadcasts.remove(scheduled)).data?.deleted, true);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `send-broadcast:${scheduled}`).executeTakeFirst(), undefined);

      const { id: queued } = (await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true })).data!;
      assert.deepEqual((await t.resend.broadcasts.remove(queued)).error, wrongState('Only draft or scheduled broadcasts can be deleted.'));
      assert.equal((await t.resend.broadcasts.remove(MISSING)).error?.statusCode, 404);
    });

    it('duplicates any broadcast into a new draft with the same content', async () => {
      const { id } = (await t.resend.broadcasts.create({ segmentId: segment, ...content, name: 'Original', topicId: topic, send: true })).data!;
      const { data } = await t.resend.broadcasts.duplicate(id);
      assert.equal(data!.object, 'broadcast');
      assert.notEqual(data!.id, id);
      const copy = (await t.resend.broadcasts.get(data!.id)).data!;
      const original = (await t.resend.broadcasts.get(id)).data!;
      assert.deepEqual([copy.status, copy.name, copy.scheduled_at], ['draft', 'Original (copy)', null]);
      for (const field of ['segment_id', 'from', 'subject', 'html', 'text', 'reply_to', 'preview_text', 'topic_id'] as const) {
        assert.deepEqual(copy[field], original[field], field);
      }
    });

    it('refuses to send a draft whose segment was deleted meanwhile', async () => {
      const doomed = (await t.resend.segments.create({ name: 'Doomed' })).data!.id;
      const { id } = (await t.resend.broadcasts.create({ segmentId: doomed, ...content })).data!;
      await t.resend.segments.remove(doomed);
      const { error } = await t.resend.broadcasts.send(id);
      assert.equal(error?.statusCode, 422);
      assert.match(error.message, /there is no segment/);
      assert.equal(await status(t, id), 'draft');
    });
  });

  describe(`broadcasts: sending through the worker (${dialect})`, () => {
    let t: TestApp;
    let segment: string;
    before(async () => {
      t = await startApp(dialect);
      segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
        await t.resend.contacts.create({ email, segments: [{ id: segment }] });
      }
    });
    after(() => t.close());

    async function sent(id: string) {
      return eventually(async () => {
        const { data } = await t.resend.broadcasts.get(id);
        return data?.status === 'sent' ? data : undefined;
      });
    }

    it('send: true goes to sent with no other call; every contact gets one email, visible in GET /emails with the broadcast id', async () => {
      const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true });
      const broadcast = await sent(data!.id);
      assert.match(broadcast.sent_at!, /^\d{4}-\d{2}-\d{2} /);
      const { data: list } = await t.resend.emails.list({ limit: 100 });
      const emails = list!.data.filter((e) => (e as { broadcast_id?: string }).broadcast_id === data!.id);
      assert.deepEqual(emails.map((e) => e.to[0]).sort(), ['a@example.com', 'b@example.com', 'c@example.com']);
      assert.ok(emails.every((e) => e.from === 'Acme <news@example.com>' && e.subject === 'Hello there'));
      const email = (await t.resend.emails.get(emails[0]!.id)).data as unknown as { broadcast_id?: string; html: string };
      assert.equal(email.broadcast_id, data!.id);
      assert.equal(email.html, '<p>Hi there</p>');
      await eventually(async () => (await t.resend.emails.get(emails[0]!.id)).data?.last_event === 'delivered');
      const plain = await t.resend.emails.send({ from: 'a@example.com', to: 'x@example.com', subject: 's', text: 't' });
      const single = (await t.resend.emails.get(plain.data!.id)).data!;
      assert.equal('broadcast_id' in single, false, 'only broadcast emails carry broadcast_id');
      const snapshot = await t.ctx.db.selectFrom('broadcast_recipients').select('contact_id').where('broadcast_id', '=', data!.id).execute();
      assert.deepEqual(snapshot, [], 'the snapshot goes once the fan-out is done');
    });

    it('a scheduled broadcast is sent when its time comes, not before', async () => {
      const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: 'in 10 min' });
      await nothingLeftToDo(t);
      assert.equal(await status(t, data!.id), 'scheduled');
      t.advance(11 * 60 * 1000);
      await sent(data!.id);
      const count = await t.ctx.db.selectFrom('emails').select('id').where('broadcast_id', '=', data!.id).execute();
      assert.equal(count.length, 3);
    });

    it('a canceled schedule sends nothing, even once its time has passed', async () => {
      const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true, scheduledAt: 'in 5 min' });
      await t.resend.broadcasts.cancel(data!.id);
      t.advance(6 * 60 * 1000);
      await nothingLeftToDo(t);
      assert.equal(await status(t, data!.id), 'draft');
      assert.deepEqual(await t.ctx.db.selectFrom('emails').select('id').where('broadcast_id', '=', data!.id).execute(), []);
    });
  });
}
