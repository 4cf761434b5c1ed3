import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreateBroadcastOptions } from 'resend';
import { readUnsubscribeToken, unsubscribeKey } from '../../../src/domain/recipients/unsubscribe-tokens.ts';
import { dialects, eventually, startApp, TEST_ENV, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type ReceivedMessage, type TestSmtpServer } from '../../support/smtp-server.ts';

const PUBLIC_URL = 'https://mail.example.com';
const from = 'Acme News <news@example.com>';

/** Sends a broadcast and waits until every email of it is delivered; its messages, by recipient. */
async function broadcast(t: TestApp, smtp: TestSmtpServer, options: Record<string, unknown>): Promise<Map<string, ReceivedMessage>> {
  const { data, error } = await t.resend.broadcasts.create({ from, send: true, ...options } as CreateBroadcastOptions);
  assert.equal(error, null);
  await eventually(async () => (await t.resend.broadcasts.get(data.id)).data?.status === 'sent' || undefined);
  const emails = await t.ctx.db.selectFrom('emails').select(['id', 'to', 'last_event']).where('broadcast_id', '=', data.id).execute();
  const messages = await eventually(() => {
    const found = emails.map((email) => smtp.messages.find((m) => m.parsed.messageId?.startsWith(`<${email.id}@`)));
    return found.every((m) => m !== undefined) ? found : undefined;
  });
  return new Map(messages.map((message) => [message.to[0]!, message]));
}

for (const dialect of dialects) {
  describe(`broadcasts at a real SMTP server (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    let everyone: string;
    const ids: Record<string, string> = {};
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_PUBLIC_URL: PUBLIC_URL } });
      await t.resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your company' });
      await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      await t.resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 });
      everyone = (await t.resend.segments.create({ name: 'Everyone' })).data!.id;
      const add = async (email: string, extra: object = {}) => {
        ids[email] = (await t.resend.contacts.create({ email, segments: [{ id: everyone }], ...extra })).data!.id;
      };
      await add('ann@example.com', { firstName: 'Ann', lastName: 'Lee', properties: { company: 'Tea & <Co>', seats: 5 } });
      await add('bob@example.com');
      await add('cy@example.com', { firstName: '', properties: { company: '' } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    it('personalises subject, html and the generated text per contact, with property and placeholder fallbacks', async () => {
      const html =
        '<html><body><p>Hello {{{contact.first_name|there}}} {{{LAST_NAME}}}</p>' +
        '<p>{{{contact.company}}} / {{{contact.company|Inline}}} / {{{contact.plan|free}}} / {{{contact.seats}}} / [{{{contact.plan}}}]</p>' +
        '<p>{{{EMAIL}}} {{{contact.email}}} {{{FIRST_NAME|friend}}} {{{NO_SUCH|?}}}{{{contact.nope}}}</p></body></html>';
      const received = await broadcast(t, smtp, {
        segmentId: everyone,
        subject: 'News for {{{FIRST_NAME|you}}} at {{{contact.company}}}',
        html,
        previewText: 'This month & more',
      });
      assert.deepEqual([...received.keys()].sort(), ['ann@example.com', 'bob@example.com', 'cy@example.com']);

      const ann = received.get('ann@example.com')!.parsed;
      assert.equal(ann.subject, 'News for Ann at Tea & <Co>', 'values go into the subject as they are');
      assert.match(ann.html as string, /<p>Hello Ann Lee<\/p>/);
      assert.match(ann.html as string, /<p>Tea &amp; &lt;Co&gt; \/ Tea &amp; &lt;Co&gt; \/ free \/ 5 \/ \[\]<\/p>/, 'escaped in html');
      assert.match(ann.html as string, /<p>ann@example.com ann@example.com Ann \?<\/p>/, 'an unknown placeholder renders its fallback, or nothing');
      assert.match(ann.html as string, /<body><div style="display:none;[^"]*">This month &amp; more<\/div><p>Hello/, 'the preview text, hidden, first in the body');
      assert.match(ann.text!, /Hello Ann Lee/, 'the text part is generated from the personalised html');
      assert.match(ann.text!, /Tea & <Co> \/ Tea & <Co> \/ free \/ 5/);

      const bob = received.get('bob@example.com')!.parsed;
      assert.equal(bob.subject, 'News for you at your company');
      assert.match(bob.html as string, /<p>Hello there <\/p>/);
      assert.match(bob.html as string, /<p>your company \/ Inline \/ free \/ 1 \/ \[\]<\/p>/, "the placeholder's own fallback comes before the property's");
      const cy = received.get('cy@example.com')!.parsed;
      assert.match(cy.html as string, /<p>Hello there <\/p>/, 'an empty value takes the fallback');
      assert.match(cy.html as string, /<p>your company \/ Inline /);

      const [annEmail] = await t.ctx.db.selectFrom('emails').select('id').where('to', '=', '["ann@example.com"]').execute();
      const shown = (await t.resend.emails.get(annEmail!.id)).data!;
      assert.equal(shown.html, ann.html, 'GET /emails/:id shows the body that was sent');
      assert.equal(shown.subject, ann.subject);
      assert.deepEqual(shown.to, ['ann@example.com']);
      assert.equal(shown.from, from);

      const [bobEmail] = await t.ctx.db.selectFrom('emails').select(['id', 'broadcast_id']).where('to', '=', '["bob@example.com"]').execute();
      const company = (await t.resend.contactProperties.list()).data!.data.find((p) => p.key === 'company')!;
      await t.resend.contactProperties.update({ id: company.id, fallbackValue: 'changed since' });
      assert.equal((await t.resend.emails.get(bobEmail!.id)).data!.html, bob.html, 'the property fallbacks of when the fan-out started');
      const stored = await t.ctx.db.selectFrom('broadcasts').select('property_fallbacks').where('id', '=', bobEmail!.broadcast_id!).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(stored.property_fallbacks!), { company: 'your company', seats: 1 }, 'only those the content uses');
      await t.resend.contactProperties.update({ id: company.id, fallbackValue: 'your company' });
    });

    it('renders a given text part without escaping, and sends none when text is ""', async () => {
      const withText = await broadcast(t, smtp, { segmentId: everyone, subject: 'T', html: '<p>x</p>', text: 'Hi {{{contact.first_name|there}}} & <{{{contact.company}}}>' });
      assert.equal(withText.get('ann@example.com')!.parsed.text, 'Hi Ann & <Tea & <Co>>');
      assert.equal(withText.get('bob@example.com')!.parsed.text, 'Hi there & <your company>');
      const noText = await broadcast(t, smtp, { segmentId: everyone, subject: 'N', html: '<p>{{{FIRST_NAME|x}}}</p>', text: '' });
      const raw = noText.get('ann@example.com')!.raw.toString();
      assert.doesNotMatch(raw, /text\/plain/);
      assert.match(raw, /text\/html/);
      const textOnly = await broadcast(t, smtp, { segmentId: everyone, subject: 'O', text: 'Only {{{FIRST_NAME|text}}}' });
      assert.equal(textOnly.get('bob@example.com')!.parsed.text?.trim(), 'Only text');
      assert.equal(textOnly.get('bob@example.com')!.parsed.html, false);
    });

    it('gives every email its own signed unsubscribe link, in the body and in List-Unsubscribe with one-click', async () => {
      const topic = (await t.resend.topics.create({ name: 'Weekly', defaultSubscription: 'opt_in' })).data!.id;
      const received = await broadcast(t, smtp, {
        segmentId: everyone,
        topicId: topic,
        subject: 'S',
        html: '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a> {{{SERVICE_UNSUBSCRIBE_URL}}}',
      });
      const { data: list } = await t.resend.broadcasts.list();
      const broadcastId = list!.data[0]!.id;
      const key = unsubscribeKey(TEST_ENV.MAILROOM_SECRET!);
      const links = new Set<string>();
      for (const [address, message] of received) {
        const link = /(?:^|\r\n)List-Unsubscribe:\s+<([^>]+)>\r\n/.exec(message.raw.toString())![1]!;
        assert.match(link, /^https:\/\/mail\.example\.com\/unsubscribe\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
        assert.match(message.raw.toString(), /\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n/);
        assert.equal(message.parsed.html, `<a href="${link}">Unsubscribe</a> ${link}`);
        const claims = readUnsubscribeToken(key, link.slice(`${PUBLIC_URL}/unsubscribe/`.length));
        assert.deepEqual(claims, { contactId: ids[address], broadcastId, topicId: topic });
        links.add(link);
      }
      assert.equal(links.size, 3, 'one link per recipient');
    });

    it('sends to the segment minus the unsubscribed, and on a topic only to those it allows', async () => {
      const segment = (await t.resend.segments.create({ name: 'Topics' })).data!.id;
      const weekly = (await t.resend.topics.create({ name: 'Weekly digest', defaultSubscription: 'opt_in' })).data!.id;
      const offers = (await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!.id;
      const add = (email: string, extra: object = {}) => t.resend.contacts.create({ email, segments: [{ id: segment }], ...extra });
      await add('in@example.com', { topics: [{ id: weekly, subscription: 'opt_in' }, { id: offers, subscription: 'opt_in' }] });
      await add('out@example.com', { topics: [{ id: weekly, subscription: 'opt_out' }, { id: offers, subscription: 'opt_out' }] });
      await add('none@example.com');
      await add('unsub@example.com', { unsubscribed: true, topics: [{ id: weekly, subscription: 'opt_in' }, { id: offers, subscription: 'opt_in' }] });
      await t.resend.contacts.create({ email: 'outsider@example.com', topics: [{ id: offers, subscription: 'opt_in' }] });

      const to = async (topicId?: string) => [...(await broadcast(t, smtp, { segmentId: segment, topicId, subject: 's', text: 't' })).keys()].sort();
      assert.deepEqual(await to(), ['in@example.com', 'none@example.com', 'out@example.com'], 'no topic: all but the unsubscribed');
      assert.deepEqual(await to(weekly), ['in@example.com', 'none@example.com'], 'default opt_in: all but those who opted out');
      assert.deepEqual(await to(offers), ['in@example.com'], 'default opt_out: only those who opted in');
    });
  });
}
