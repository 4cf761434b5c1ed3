import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CreateEmailOptions } from 'resend';
import { createTrackingToken, readTrackingToken, trackingKey } from '../../../src/domain/tracking/tracking-tokens.ts';
import * as emails from '../../../src/store/emails.ts';
import { dialects, eventually, followLink, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type ReceivedMessage, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

// Open and click tracking end to end: a domain that tracks, a relay (the real SMTP sink), the public
// tracking URLs fetched as a mail client would, and the webhooks an application receives.

const PUBLIC_URL = 'https://mail.example.com';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const SHOP = 'https://shop.example/p?a=1&b=2&copy=3#frag';
const HTML =
  '<html><head><link rel="stylesheet" href="https://css.example/s.css"></head><body>' +
  '<p><a href="https://shop.example/p?a=1&amp;b=2&copy=3#frag">Shop</a> <a href="mailto:help@tracked.test">Mail us</a> <a href="#top">Top</a></p>' +
  '</body></html>';

const clickLinks = (html: string) => [...html.matchAll(/href="(https:\/\/mail\.example\.com\/track\/click\/[^"]+)"/g)].map((m) => m[1]!);
const pixelOf = (html: string) => html.match(/<img src="(https:\/\/mail\.example\.com\/track\/open\/[^"]+)" width="1" height="1"/)?.[1];

for (const dialect of dialects) {
  describe(`open and click tracking (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let receiver: WebhookReceiver;
    let t: TestApp;

    before(async () => {
      smtp = await startSmtpServer();
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_PUBLIC_URL: PUBLIC_URL, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      await t.resend.domains.create({ name: 'tracked.test', openTracking: true, clickTracking: true });
      await t.resend.domains.create({ name: 'plain.test' });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.opened', 'email.clicked'] });
    });
    after(async () => {
      await t.close();
      await receiver.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    /** Sends through the relay and waits for its delivery: the message each recipient received. */
    async function deliver(email: Partial<CreateEmailOptions>): Promise<{ id: string; received: Map<string, ReceivedMessage> }> {
      const { data, error } = await t.resend.emails.send({ from: 'Acme <news@tracked.test>', subject: 'Hello', html: HTML, ...email } as CreateEmailOptions);
      assert.equal(error, null);
      const id = data.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, id))?.last_event === 'delivered' || undefined);
      const copies = smtp.messages.filter((m) => m.parsed.messageId === `<${id}@tracked.test>` || m.parsed.messageId === `<${id}@plain.test>`);
      return { id, received: new Map(copies.map((m) => [m.to[0]!, m])) };
    }

    const engagements = async (id: string) =>
      (await emails.listEvents(t.ctx.db, id)).filter((e) => e.type === 'opened' || e.type === 'clicked').map((e) => ({ type: e.type, recipient: e.recipient, link: e.link, bot: e.bot, response: e.response }));
    const hooksOf = (id: string) => receiver.received.filter((h) => h.payload.data.email_id === id);

    it('sends each recipient a pixel and rewritten links of its own; the head, mailto: and anchors stay; the text part is the original', async () => {
      const { received } = await deliver({ to: ['ann@example.org', 'bob@example.org'] });
      assert.deepEqual([...received.keys()].sort(), ['ann@example.org', 'bob@example.org'], 'a message per recipient');
      const ann = received.get('ann@example.org')!.parsed;
      const bob = received.get('bob@example.org')!.parsed;
      for (const parsed of [ann, bob]) {
        const html = parsed.html as string;
        assert.ok(pixelOf(html), 'the pixel');
        assert.equal(clickLinks(html).length, 1, 'the one web link in the body');
        assert.ok(html.startsWith('<html><head><link rel="stylesheet" href="https://css.example/s.css"></head><body>'), 'the head as it was');
        assert.match(html, /<a href="mailto:help@tracked\.test">Mail us<\/a> <a href="#top">Top<\/a><\/p><img /);
        assert.ok(html.endsWith('</body></html>'));
        assert.doesNotMatch(parsed.text!, /\/track\//, 'the generated text part links to the original');
        assert.match(parsed.text!, /https:\/\/shop\.example\/p\?a=1&b=2&copy=3#frag/);
      }
      assert.notEqual(pixelOf(ann.html as string), pixelOf(bob.html as string));
      assert.notEqual(clickLinks(ann.html as string)[0], clickLinks(bob.html as string)[0]);
    });

    it("records each recipient's open, answers the image uncached, and posts Resend's email.opened", async () => {
      const { id, received } = await deliver({ to: ['ann@example.org', 'bob@example.org'], tags: [{ name: 'kind', value: 'news' }] });
      const pixel = pixelOf(received.get('bob@example.org')!.parsed.html as string)!;
      const response = await followLink(t, pixel, { headers: { 'user-agent': BROWSER } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/gif');
      assert.equal(response.headers.get('cache-control'), 'no-store, no-cache, must-revalidate, max-age=0');
      assert.equal(response.headers.get('pragma'), 'no-cache');
      assert.equal(response.headers.get('expires'), '0');
      const gif = Buffer.from(await response.arrayBuffer());
      assert.equal(gif.subarray(0, 6).toString(), 'GIF89a');

      assert.deepEqual(await engagements(id), [{ type: 'opened', recipient: 'bob@example.org', link: null, bot: 0, response: null }]);
      const statuses = Object.fromEntries((await emails.findRecipients(t.ctx.db, id)).map((r) => [r.address, r.status]));
      assert.deepEqual(statuses, { 'ann@example.org': 'delivered', 'bob@example.org': 'opened' });
      assert.equal((await t.resend.emails.get(id)).data!.last_event, 'opened');
      const [hook] = await eventually(() => hooksOf(id).length > 0 && hooksOf(id));
      assert.equal(hook!.payload.type, 'email.opened');
      const { created_at: createdAt, ...data } = hook!.payload.data;
      assert.match(createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(data, {
        email_id: id,
        message_id: `<${id}@tracked.test>`,
        from: 'Acme <news@tracked.test>',
        to: ['ann@example.org', 'bob@example.org'],
        subject: 'Hello',
        tags: { kind: 'news' },
      });
    });

    it('redirects a click to the exact original link (entities decoded, query and fragment intact) and posts email.clicked with its click', async () => {
      const { id, received } = await deliver({ to: ['ann@example.org'] });
      const [link] = clickLinks(received.get('ann@example.org')!.parsed.html as string);
      const response = await followLink(t, link!, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), SHOP);
      assert.deepEqual(await engagements(id), [{ type: 'clicked', recipient: 'ann@example.org', link: SHOP, bot: 0, response: null }]);
      assert.equal((await t.resend.emails.get(id)).data!.last_event, 'clicked');
      const [hook] = await eventually(() => hooksOf(id).length > 0 && hooksOf(id));
      assert.equal(hook!.payload.type, 'email.clicked');
      const { timestamp, ...click } = hook!.payload.data.click;
      assert.deepEqual(click, { ipAddress: '127.0.0.1', link: SHOP, userAgent: BROWSER });
      assert.match(timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('answers 404 in Resend\'s shape, never a redirect, to an altered, unsigned or wrong-kind token', async () => {
      const { id, received } = await deliver({ to: ['ann@example.org'] });
      const html = received.get('ann@example.org')!.parsed.html as string;
      const link = clickLinks(html)[0]!;
      const token = link.slice(`${PUBLIC_URL}/track/click/`.length);
      const [payload, mac] = token.split('.') as [string, string];
      const altered = Buffer.from(payload, 'base64url');
      altered[altered.length - 1] = 'x'.charCodeAt(0);
      const evil = createTrackingToken(trackingKey('another-secret-another-secret-0123456789'), { kind: 'click', emailId: id, recipient: 'ann@example.org', link: 'https://evil.example/' });
      const openToken = pixelOf(html)!.slice(`${PUBLIC_URL}/track/open/`.length);
      for (const bad of [`${altered.toString('base64url')}.${mac}`, payload, `${payload}.`, evil, openToken, 'x', `${token}x`]) {
        const response = await followLink(t, `${PUBLIC_URL}/track/click/${bad}`, { redirect: 'manual' });
        assert.equal(response.status, 404, bad);
        assert.equal(response.headers.get('location'), null);
        assert.deepEqual(await response.json(), { statusCode: 404, name: 'not_found', message: 'This tracking link is not valid.' });
      }
      const pixel = await followLink(t, `${PUBLIC_URL}/track/open/${token}`);
      assert.equal(pixel.status, 404, 'a click token is no pixel');
      await pixel.arrayBuffer();
      assert.deepEqual(await engagements(id), []);
    });

    it('still answers a validly signed URL whose email does not exist, recording nothing', async () => {
      const key = trackingKey(t.ctx.secret);
      const emailId = '0192e3a4-1111-7000-8000-00000000dead';
      const pixel = await followLink(t, `${PUBLIC_URL}/track/open/${createTrackingToken(key, { kind: 'open', emailId, recipient: 'x@example.org' })}`);
      assert.equal(pixel.status, 200);
      await pixel.arrayBuffer();
      const click = await followLink(t, `${PUBLIC_URL}/track/click/${createTrackingToken(key, { kind: 'click', emailId, recipient: 'x@example.org', link: 'https://shop.example/é' })}`, { redirect: 'manual' });
      assert.equal(click.status, 302);
      assert.equal(click.headers.get('location'), 'https://shop.example/%C3%A9', 'a non-ASCII link, percent-encoded');
      assert.equal(await t.ctx.db.selectFrom('email_events').select('id').where('email_id', '=', emailId).executeTakeFirst(), undefined);
    });

    it('flags a HEAD request and a scanner soon after delivery as bots: recorded, no webhook, no change of status', async () => {
      const { id, received } = await deliver({ to: ['ann@example.org'] });
      const html = received.get('ann@example.org')!.parsed.html as string;
      const head = await followLink(t, pixelOf(html)!, { method: 'HEAD', headers: { 'user-agent': BROWSER } });
      assert.equal(head.status, 200);
      const scan = await followLink(t, clickLinks(html)[0]!, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Sentinel)' } });
      assert.equal(scan.status, 302, 'a scanner still gets the redirect');
      assert.deepEqual(await engagements(id), [
        { type: 'opened', recipient: 'ann@example.org', link: null, bot: 1, response: 'HEAD request' },
        { type: 'clicked', recipient: 'ann@example.org', link: SHOP, bot: 1, response: 'scanner user agent (barracuda), soon after delivery' },
      ]);
      assert.equal((await t.resend.emails.get(id)).data!.last_event, 'delivered');

      // The same user agent long after delivery is taken for the reader's client.
      t.advance(10 * 60_000);
      await (await followLink(t, pixelOf(html)!, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Sentinel)' } })).arrayBuffer();
      const [hook] = await eventually(() => hooksOf(id).length > 0 && hooksOf(id));
      assert.equal(hook!.payload.type, 'email.opened');
      assert.equal(hooksOf(id).length, 1, 'no webhook for the bots');
    });

    it('tracks a broadcast per recipient through personalisation, and leaves its unsubscribe link alone', async () => {
      const segment = (await t.resend.segments.create({ name: 'Tracked' })).data!.id;
      await t.resend.contacts.create({ email: 'cy@example.org', firstName: 'Cy', segments: [{ id: segment }] });
      const { data, error } = await t.resend.broadcasts.create({
        from: 'Acme <news@tracked.test>',
        segmentId: segment,
        subject: 'News',
        html: '<body><p><a href="https://shop.example/{{{contact.first_name}}}?from=news">Yours</a></p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p></body>',
        send: true,
      });
      assert.equal(error, null);
      const message = await eventually(() => smtp.messages.find((m) => m.to[0] === 'cy@example.org'));
      const html = message.parsed.html as string;
      assert.match(html, /<a href="https:\/\/mail\.example\.com\/unsubscribe\/[A-Za-z0-9_.-]+">Unsubscribe<\/a>/, 'the unsubscribe link as rendered');
      const [link] = clickLinks(html);
      const response = await followLink(t, link!, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
      assert.equal(response.headers.get('location'), 'https://shop.example/Cy?from=news');
      const email = await t.ctx.db.selectFrom('emails').select('id').where('broadcast_id', '=', data.id).executeTakeFirstOrThrow();
      assert.deepEqual(await engagements(email.id), [{ type: 'clicked', recipient: 'cy@example.org', link: 'https://shop.example/Cy?from=news', bot: 0, response: null }]);
    });

    it('leaves the html as it was when the domain does not track', async () => {
      const { received } = await deliver({ from: 'news@plain.test', to: ['ann@example.org'], text: 'Plain words' });
      const parsed = received.get('ann@example.org')!.parsed;
      assert.equal(parsed.html, HTML);
      assert.equal(parsed.text, 'Plain words');
    });
  });
}

for (const dialect of dialects) {
  describe(`open and click tracking in capture mode (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { env: { MAILROOM_PUBLIC_URL: PUBLIC_URL } });
      await t.resend.domains.create({ name: 'tracked.test', openTracking: true });
    });
    after(() => t.close());

    it("keeps the first recipient's tracked message as the email's message", async () => {
      const { data } = await t.resend.emails.send({ from: 'news@tracked.test', to: ['ann@example.org', 'bob@example.org'], subject: 'Hi', html: HTML });
      const id = data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, id))?.last_event === 'delivered' || undefined);
      const raw = await (await t.fetch(`/emails/${id}/raw`, { headers: { accept: 'message/rfc822' } })).text();
      const token = raw.replace(/=\r\n/g, '').match(/\/track\/open\/([A-Za-z0-9_.-]+)/)![1]!;
      assert.deepEqual(readTrackingToken(trackingKey(t.ctx.secret), token, 'open'), { kind: 'open', emailId: id, recipient: 'ann@example.org' });
      assert.doesNotMatch(raw, /\/track\/click\//, 'click tracking is off on this domain');
    });
  });
}

