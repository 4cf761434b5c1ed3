import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUnsubscribeToken, unsubscribeKey } from '../../../src/domain/recipients/unsubscribe-tokens.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

const PUBLIC_URL = 'https://mail.example.com';
const CONTACTS = ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com'];

/** Sends a broadcast; the List-Unsubscribe link each contact received, as a path on the app. */
async function sendAndCollectLinks(t: TestApp, smtp: TestSmtpServer, options: object): Promise<Map<string, string>> {
  const { data } = await t.resend.broadcasts.create({ from: 'news@example.com', subject: 'S', html: '<p>x</p>', send: true, ...options } as never);
  await eventually(async () => (await t.resend.broadcasts.get(data!.id)).data?.status === 'sent' || undefined);
  const emails = await t.ctx.db.selectFrom('emails').select(['id', 'to']).where('broadcast_id', '=', data!.id).execute();
  const links = new Map<string, string>();
  for (const email of emails) {
    const message = await eventually(() => smtp.messages.find((m) => m.parsed.messageId?.startsWith(`<${email.id}@`)));
    const link = /(?:^|\r\n)List-Unsubscribe:\s+<([^>]+)>/.exec(message.raw.toString())![1]!;
    links.set(JSON.parse(email.to)[0], link.slice(PUBLIC_URL.length));
  }
  return links;
}

/** A request a browser or a mail client would make: no API key. */
function anonymous(t: TestApp, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${t.url}${path}`, init);
}

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

for (const dialect of dialects) {
  describe(`the unsubscribe page and one-click (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    let segment: string;
    const topics: Record<string, string> = {};
    let onTopic: Map<string, string>;
    let noTopic: Map<string, string>;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_PUBLIC_URL: PUBLIC_URL } });
      segment = (await t.resend.segments.create({ name: 'All' })).data!.id;
      const topic = async (name: string, defaultSubscription: 'opt_in' | 'opt_out', visibility: 'public' | 'private') => {
        const { data } = await t.resend.topics.create({ name, defaultSubscription, visibility } as never);
        topics[name] = data!.id;
      };
      await topic('Product news', 'opt_in', 'public');
      await topic('Events', 'opt_out', 'public');
      await topic('<Deals & "more">', 'opt_in', 'public');
      await topic('Beta', 'opt_out', 'private');
      await topic('Secret', 'opt_out', 'private');
      for (const email of CONTACTS) {
        await t.resend.contacts.create({ email, segments: [{ id: segment }], topics: [{ id: topics.Beta!, subscription: 'opt_in' }] });
      }
      onTopic = await sendAndCollectLinks(t, smtp, { segmentId: segment, topicId: topics['Product news'] });
      noTopic = await sendAndCollectLinks(t, smtp, { segmentId: segment });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    async function subscriptions(email: string): Promise<Record<string, string>> {
      const { data } = await t.resend.contacts.topics.list({ email });
      return Object.fromEntries(data!.data.map((topic) => [topic.name, topic.subscription]));
    }
    const unsubscribed = async (email: string) => (await t.resend.contacts.get(email)).data!.unsubscribed;

    it('serves a plain html page, with no API key, of the public topics and the private ones the contact receives', async () => {
      const response = await anonymous(t, onTopic.get('ann@example.com')!);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      const page = await response.text();
      assert.match(page, /^<!doctype html>/);
      assert.match(page, /Email preferences for <strong>ann@example\.com<\/strong>/);
      const leave = `<form method="post"><input type="hidden" name="topic_id" value="${topics['Product news']}"><button type="submit">Unsubscribe</button></form>`;
      assert.ok(page.includes(`<strong>Product news</strong>: subscribed ${leave}`));
      assert.match(page, /<strong>Events<\/strong>: unsubscribed</);
      assert.match(page, /<strong>Beta<\/strong>: subscribed/, 'a private topic the contact opted in to');
      assert.doesNotMatch(page, /Secret/, 'a private topic the contact does not receive');
      assert.match(page, /<strong>&lt;Deals &amp; &quot;more&quot;&gt;<\/strong>/, 'names are escaped');
      assert.doesNotMatch(page, /<Deals/);
      assert.match(page, /name="everything" value="true"><button type="submit">Unsubscribe from all emails</);
      assert.doesNotMatch(page, /<script/i);
    });

    it('one-click (RFC 8058, urlencoded) on a topic email leaves that topic only', async () => {
      const response = await anonymous(t, onTopic.get('ann@example.com')!, form({ 'List-Unsubscribe': 'One-Click' }));
      assert.equal(response.status, 200);
      assert.match(await response.text(), /You will no longer receive Product news\./);
      assert.equal((await subscriptions('ann@example.com'))['Product news'], 'opt_out');
      assert.equal((await subscriptions('ann@example.com')).Beta, 'opt_in');
      assert.equal(await unsubscribed('ann@example.com'), false);

      smtp.messages.length = 0;
      const next = await sendAndCollectLinks(t, smtp, { segmentId: segment, topicId: topics['Product news'] });
      assert.deepEqual([...next.keys()].sort(), ['bob@example.com', 'cy@example.com', 'dee@example.com'], 'the next broadcast on it skips her');
    });

    it('one-click on an email without a topic unsubscribes from everything; multipart bodies work too', async () => {
      const body = new FormData();
      body.append('List-Unsubscribe', 'One-Click');
      const response = await anonymous(t, noTopic.get('bob@example.com')!, { method: 'POST', body });
      assert.equal(response.status, 200);
      assert.equal(await unsubscribed('bob@example.com'), true);
      assert.match(await (await anonymous(t, noTopic.get('bob@example.com')!)).text(), /You are unsubscribed from all of these emails\./);
    });

    it("the page's forms leave one topic, or everything", async () => {
      const link = noTopic.get('cy@example.com')!;
      const left = await anonymous(t, link, form({ topic_id: topics.Beta! }));
      assert.equal(left.status, 200);
      const page = await left.text();
      assert.match(page, /<p class="done">You will no longer receive Beta\.<\/p>/);
      assert.doesNotMatch(page, /<strong>Beta<\/strong>/, 'a private topic left no longer shows');
      assert.equal((await subscriptions('cy@example.com')).Beta, 'opt_out');
      assert.equal(await unsubscribed('cy@example.com'), false);

      const all = await anonymous(t, link, form({ everything: 'true' }));
      assert.match(await all.text(), /You will no longer receive any of these emails\./);
      assert.equal(await unsubscribed('cy@example.com'), true);
    });

    it('answers an altered, forged or unknown link with a 404 page and changes nothing', async () => {
      const link = onTopic.get('dee@example.com')!;
      const token = link.split('/').at(-1)!;
      const [payload, signature] = token.split('.');
      const ann = (await t.resend.contacts.get('ann@example.com')).data!.id;
      const dee = (await t.resend.contacts.get('dee@example.com')).data!.id;
      const other = Buffer.from(Buffer.from(payload!, 'base64url').toString().replace(dee, ann)).toString('base64url');
      assert.notEqual(other, payload);
      const forged = createUnsubscribeToken(unsubscribeKey('another-secret-another-secret-another-secret'), { contactId: dee, broadcastId: 'x', topicId: null });
      for (const bad of [`${other}.${signature}`, forged, 'nonsense', `${token}x`]) {
        for (const init of [{}, form({ 'List-Unsubscribe': 'One-Click' })]) {
          const response = await anonymous(t, `/unsubscribe/${bad}`, init);
          assert.equal(response.status, 404, bad);
          assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
          assert.match(await response.text(), /<h1>Link not found<\/h1>\n<p>This unsubscribe link is not valid/);
        }
      }
      assert.equal(await unsubscribed('dee@example.com'), false);
      assert.equal(await unsubscribed('ann@example.com'), false);
      assert.equal((await subscriptions('dee@example.com'))['Product news'], 'opt_in');
    });

    it('leaves only a topic the page shows: a private topic the contact does not receive is not the link’s to change', async () => {
      const link = noTopic.get('bob@example.com')!;
      const response = await anonymous(t, link, form({ topic_id: topics.Secret! }));
      assert.equal(response.status, 404);
      assert.match(await response.text(), /Topic not found/);
      assert.equal((await subscriptions('bob@example.com')).Secret, 'opt_out');
      const { data } = await t.resend.contacts.topics.update({ email: 'bob@example.com', topics: [{ id: topics.Secret!, subscription: 'opt_in' }] });
      assert.ok(data);
      assert.equal((await anonymous(t, link, form({ topic_id: topics.Secret! }))).status, 200, 'shown once the contact receives it');
    });

    it('sends its pages with headers that keep them unframed, uncached, script-free and out of Referers', async () => {
      const link = noTopic.get('ann@example.com')!;
      for (const response of [await anonymous(t, link), await anonymous(t, '/unsubscribe/nonsense'), await anonymous(t, link, form({}))]) {
        const csp = response.headers.get('content-security-policy') ?? '';
        assert.match(csp, /default-src 'none'/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.match(csp, /form-action 'self'/);
        assert.equal(response.headers.get('x-frame-options'), 'DENY');
        assert.equal(response.headers.get('cache-control'), 'no-store');
        assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      }
    });

    it('answers a POST that asks for nothing, or for an unknown topic, with an html error page', async () => {
      const link = onTopic.get('dee@example.com')!;
      const empty = await anonymous(t, link, form({}));
      assert.equal(empty.status, 400);
      assert.match(await empty.text(), /Choose a topic to leave, or everything\./);
      const unknown = await anonymous(t, link, form({ topic_id: '01a2007a-0000-7000-8000-000000000000' }));
      assert.equal(unknown.status, 404);
      assert.match(await unknown.text(), /Topic not found/);
      assert.equal(await unsubscribed('dee@example.com'), false);
    });
  });
}
