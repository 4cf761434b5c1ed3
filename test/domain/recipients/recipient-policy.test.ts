import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

const base = { from: 'Acme <news@example.com>', subject: 'On a topic', text: 'Hello' };

async function events(t: TestApp, id: string): Promise<{ type: string; recipient: string | null; response: string | null }[]> {
  return ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: never[] }).data;
}

/** Every envelope recipient the email reached, over its copies (one SMTP transaction per recipient). */
async function delivered(t: TestApp, smtp: TestSmtpServer, id: string): Promise<{ to: string[] }> {
  await eventually(async () => (await t.resend.emails.get(id)).data?.last_event === 'delivered' || undefined);
  return { to: smtp.messages.filter((m) => m.parsed.messageId === `<${id}@example.com>`).flatMap((m) => m.to) };
}

for (const dialect of dialects) {
  describe(`recipient policy: topic rules on send (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    let optOutTopic: string; // contacts must opt in
    let optInTopic: string; // contacts are in unless they opt out
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
      optOutTopic = (await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!.id;
      optInTopic = (await t.resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_in' })).data!.id;
      const subscribe = (optOut: string, optIn: string) => [
        { id: optOutTopic, subscription: optOut as 'opt_in' | 'opt_out' },
        { id: optInTopic, subscription: optIn as 'opt_in' | 'opt_out' },
      ];
      await t.resend.contacts.create({ email: 'fan@example.com', topics: subscribe('opt_in', 'opt_out') });
      await t.resend.contacts.create({ email: 'leaver@example.com', topics: subscribe('opt_out', 'opt_out') });
      await t.resend.contacts.create({ email: 'quiet@example.com' });
      await t.resend.contacts.create({ email: 'gone@example.com', unsubscribed: true, topics: subscribe('opt_in', 'opt_in') });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    it('judges every address of to, cc and bcc alone, on a topic contacts must opt in to', async () => {
      const { data, error } = await t.resend.emails.send({
        ...base,
        to: ['Fan <FAN@example.com>', 'leaver@example.com'],
        cc: 'quiet@example.com',
        bcc: ['stranger@example.com', 'gone@example.com'],
        topicId: optOutTopic,
      });
      assert.equal(error, null);
      const message = await delivered(t, smtp, data.id);
      assert.deepEqual(message.to, ['FAN@example.com'], 'only the contact who opted in, compared without case');
      assert.equal(smtp.messages.length, 1);
      const { data: email } = await t.resend.emails.get(data.id);
      assert.equal(email!.topic_id, optOutTopic);

      const failed = (await events(t, data.id)).filter((e) => e.type === 'failed');
      const blocked = ['gone@example.com', 'leaver@example.com', 'quiet@example.com', 'stranger@example.com'];
      assert.deepEqual(failed.map((e) => e.recipient).sort(), blocked);
      const reason = (address: string) => failed.find((e) => e.recipient === address)!.response!;
      assert.match(reason('leaver@example.com'), /opted out of topic "Offers"/);
      assert.match(reason('quiet@example.com'), /has not opted in/);
      assert.match(reason('stranger@example.com'), /not a contact/);
      assert.match(reason('gone@example.com'), /unsubscribed from all/);
      const statuses = await t.ctx.db
        .selectFrom('email_recipients')
        .select(['address', 'status'])
        .where('email_id', '=', data.id)
        .orderBy('address')
        .execute();
      assert.deepEqual(statuses.map((r) => r.status), ['delivered', 'failed', 'failed', 'failed', 'failed']);
    });

    it('on a topic that is opt_in by default: sends to non-contacts and contacts without a choice, not to opt-outs', async () => {
      const { data } = await t.resend.emails.send({
        ...base,
        to: ['fan@example.com', 'quiet@example.com'],
        cc: ['stranger@example.com'],
        bcc: 'leaver@example.com',
        topicId: optInTopic,
      });
      const message = await delivered(t, smtp, data!.id);
      assert.deepEqual([...message.to].sort(), ['quiet@example.com', 'stranger@example.com']);
      const failed = (await events(t, data!.id)).filter((e) => e.type === 'failed').map((e) => e.recipient);
      assert.deepEqual(failed.sort(), ['fan@example.com', 'leaver@example.com']);
    });

    it('fails an email that no recipient may receive at once: last_event failed, no job, nothing sent', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: ['leaver@example.com', 'stranger@example.com'], topicId: optOutTopic });
      const { data: email } = await t.resend.emails.get(data!.id);
      assert.equal(email!.last_event, 'failed');
      const jobs = await t.ctx.db.selectFrom('jobs').select('key').where('key', '=', `send-email:${data!.id}`).execute();
      assert.deepEqual(jobs, []);
      const sent = await t.resend.emails.send({ ...base, to: 'fan@example.com', topicId: optOutTopic });
      await delivered(t, smtp, sent.data!.id);
      assert.deepEqual(smtp.messages.map((m) => m.to), [['fan@example.com']], 'the blocked email never reached the server');
      assert.equal((await t.resend.emails.get(data!.id)).data!.last_event, 'failed');
    });

    it('follows a contact’s later choice on the next send', async () => {
      await t.resend.contacts.topics.update({ email: 'quiet@example.com', topics: [{ id: optOutTopic, subscription: 'opt_in' }] });
      const { data } = await t.resend.emails.send({ ...base, to: 'quiet@example.com', topicId: optOutTopic });
      assert.deepEqual((await delivered(t, smtp, data!.id)).to, ['quiet@example.com']);
      await t.resend.contacts.topics.update({ email: 'quiet@example.com', topics: [{ id: optOutTopic, subscription: 'opt_out' }] });
      const again = await t.resend.emails.send({ ...base, to: 'quiet@example.com', topicId: optOutTopic });
      assert.equal((await t.resend.emails.get(again.data!.id)).data!.last_event, 'failed');
    });

    it('applies the same rules to every batch entry', async () => {
      const { data, error } = await t.resend.batch.send([
        { ...base, to: ['fan@example.com', 'leaver@example.com'], topicId: optOutTopic },
        { ...base, to: 'stranger@example.com', topicId: optOutTopic },
        { ...base, to: 'stranger@example.com', topicId: optInTopic },
      ]);
      assert.equal(error, null);
      const [first, second, third] = data.data.map((d) => d.id);
      assert.deepEqual((await delivered(t, smtp, first!)).to, ['fan@example.com']);
      assert.deepEqual((await delivered(t, smtp, third!)).to, ['stranger@example.com']);
      assert.equal((await t.resend.emails.get(second!)).data!.last_event, 'failed');
      assert.equal(smtp.messages.length, 2);
    });

    it('refuses an unknown topic_id with 422, on POST /emails and in a batch', async () => {
      const single = await t.resend.emails.send({ ...base, to: 'fan@example.com', topicId: '01a2007a-0000-7000-8000-000000000000' });
      assert.equal(single.error?.statusCode, 422);
      assert.equal(single.error?.name, 'validation_error');
      assert.match(single.error.message, /`topic_id`/);
      const batch = await t.resend.batch.send([{ ...base, to: 'fan@example.com' }, { ...base, to: 'fan@example.com', topicId: 'nope' }]);
      assert.equal(batch.error?.statusCode, 422);
      assert.match(batch.error.message, /^Email at index 1: .*`topic_id`/);
    });

    it('applies the rules again at send time: a contact who opts out while the email waits is skipped, with the reason', async () => {
      await t.resend.contacts.create({ email: 'changed-mind@example.com', topics: [{ id: optOutTopic, subscription: 'opt_in' }] });
      const { data } = await t.resend.emails.send({
        ...base,
        to: ['changed-mind@example.com', 'fan@example.com'],
        topicId: optOutTopic,
        scheduledAt: 'in 2 days',
      });
      await t.resend.contacts.topics.update({ email: 'changed-mind@example.com', topics: [{ id: optOutTopic, subscription: 'opt_out' }] });
      t.advance(2 * 24 * 3600_000 + 1000);
      assert.deepEqual((await delivered(t, smtp, data!.id)).to, ['fan@example.com']);
      const skipped = (await events(t, data!.id)).find((e) => e.recipient === 'changed-mind@example.com')!;
      assert.equal(skipped.type, 'failed');
      assert.match(skipped.response!, /opted out of topic "Offers"/);
    });

    it('skips a broadcast recipient who unsubscribes while the email waits for a retry', async () => {
      const segment = (await t.resend.segments.create({ name: 'Waiting' })).data!.id;
      await t.resend.contacts.create({ email: 'patient@example.com', segments: [{ id: segment }] });
      let refused = 0;
      smtp.onRecipient = () => (refused++ === 0 ? { code: 451, message: '4.3.0 Try again later' } : undefined);
      try {
        const { data } = await t.resend.broadcasts.create({ from: base.from, subject: 'News', text: 'Hi', segmentId: segment, send: true });
        const email = await eventually(async () => {
          const rows = await t.ctx.db.selectFrom('emails').select(['id', 'last_event']).where('broadcast_id', '=', data!.id).execute();
          return rows[0]?.last_event === 'delivery_delayed' ? rows[0] : undefined;
        });
        await t.resend.contacts.update({ email: 'patient@example.com', unsubscribed: true });
        t.advance(10_000);
        await eventually(async () => (await t.resend.emails.get(email.id)).data?.last_event === 'failed' || undefined);
        assert.equal(smtp.messages.length, 0);
        assert.match((await events(t, email.id)).at(-1)!.response!, /unsubscribed from all email/);
      } finally {
        smtp.onRecipient = () => undefined;
      }
    });

    it('leaves emails without a topic alone, whatever the contacts chose', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: ['leaver@example.com', 'gone@example.com'] });
      assert.deepEqual([...(await delivered(t, smtp, data!.id)).to].sort(), ['gone@example.com', 'leaver@example.com']);
      assert.equal('topic_id' in (await t.resend.emails.get(data!.id)).data!, false);
    });
  });
}
