import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { createComposer } from '../../../src/domain/messages/compose-pool.ts';
import { generateDkimKey } from '../../../src/delivery/dkim.ts';
import type { Tracking } from '../../../src/domain/tracking/tracked-html.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';
import type { AttachmentRow, EmailRow } from '../../../src/store/emails.ts';

const email: EmailRow = {
  id: '01a20080-28d9-7f92-b715-a17141469599',
  project_id: DEFAULT_PROJECT_ID,
  from: 'Acme <a@example.com>',
  to: ['Jane <jane@example.com>'],
  cc: [],
  bcc: ['hidden@example.com'],
  reply_to: [],
  subject: 'Thread ✓',
  headers: { 'X-Ref': '7' },
  tags: [{ name: 'kind', value: 'test' }],
  message_id: '<01a20080-28d9-7f92-b715-a17141469599@example.com>',
  scheduled_at: null,
  last_event: 'queued',
  created_at: '2026-11-21 00:00:00.000+00',
  template_id: null,
  topic_id: null,
  broadcast_id: null,
  personalization: null,
  html: '<p>Hello <b>there</b></p>',
  text: null,
};
const attachments: AttachmentRow[] = [
  { email_id: email.id, position: 0, filename: 'a.txt', content_type: null, content_id: null, content: Buffer.from('attached') },
];

describe('the composer', () => {
  const threaded = createComposer(2, 's'.repeat(40));
  const inline = createComposer(0, 's'.repeat(40));
  after(() => threaded.close());

  it('builds on its threads the same message as on the event loop', async () => {
    const date = new Date('2026-11-21T12:00:00Z');
    const [a, b] = await Promise.all([threaded.build({ email, attachments, date }, undefined), inline.build({ email, attachments, date }, undefined)]);
    const [x, y] = await Promise.all([simpleParser(a), simpleParser(b)]);
    for (const m of [x, y]) {
      assert.equal(m.subject, 'Thread ✓');
      assert.equal(m.messageId, email.message_id);
      assert.equal(m.headers.get('x-ref'), '7');
      assert.match(m.text!, /Hello THERE/i);
      assert.equal(m.attachments[0]!.content.toString(), 'attached');
    }
    assert.equal(x.html, y.html);
    assert.equal(x.date?.getTime(), y.date?.getTime());
  });

  it('writes inline images (cid:) in the generated text part as their alt text, or not at all; other images as links', async () => {
    const html = '<p>From <img src="cid:logo" alt="Acme"><img src="CID:spacer">, see <img src="https://example.com/chart.png" alt="the chart"></p>';
    const logo = { ...attachments[0]!, filename: 'logo.png', content_id: 'logo' };
    const mail = await simpleParser(await threaded.build({ email: { ...email, html }, attachments: [logo], date: new Date() }, undefined));
    assert.equal(mail.text!.trim(), 'From Acme, see the chart [https://example.com/chart.png]');
  });

  it('answers each of many concurrent builds with its own message', async () => {
    const many = await Promise.all(
      Array.from({ length: 50 }, (_, i) => threaded.build({ email: { ...email, subject: `#${i}` }, attachments: [], date: new Date() }, undefined)),
    );
    const subjects = await Promise.all(many.map(async (raw) => (await simpleParser(raw)).subject));
    assert.deepEqual(subjects, Array.from({ length: 50 }, (_, i) => `#${i}`));
  });

  it('builds a tracked message per recipient on one thread, the attachments moved once, as on the event loop', async () => {
    const key = await generateDkimKey('s'.repeat(40), 'd1');
    const domain = { id: 'd1', name: 'example.com', dkim_selector: key.selector, dkim_private_key: key.sealedPrivateKey };
    const html = '<p><a href="https://shop.example/">Shop</a></p>';
    const tracking = (recipient: string): Tracking => ({ emailId: email.id, recipient, baseUrl: 'https://mail.example.com', open: true, click: true, keep: 'https://mail.example.com/unsubscribe/' });
    const trackings = [tracking('jane@example.com'), tracking('hidden@example.com')];
    const date = new Date('2026-11-21T12:00:00Z');
    const content = () => ({ email: { ...email, html }, attachments: attachments.map((a) => ({ ...a, content: Buffer.from(a.content) })), date });
    const [onThread, inlineBuilt] = await Promise.all([threaded.buildTracked(content(), domain, trackings), inline.buildTracked(content(), domain, trackings)]);
    assert.equal(onThread.length, 2);
    const parsed = await Promise.all(onThread.map((raw) => simpleParser(raw)));
    assert.notEqual(parsed[0]!.html, parsed[1]!.html, 'each recipient its own URLs');
    for (const [i, m] of parsed.entries()) {
      assert.match(m.html as string, /^<p><a href="https:\/\/mail\.example\.com\/track\/click\/[^"]+">Shop<\/a><\/p><img src="https:\/\/mail\.example\.com\/track\/open\//);
      assert.equal(m.text!.trim(), 'Shop [https://shop.example/]', 'the text part from the original html');
      assert.equal(m.attachments[0]!.content.toString(), 'attached');
      assert.ok(m.headers.has('dkim-signature'));
      assert.equal(m.html, (await simpleParser(inlineBuilt[i]!)).html);
    }
  });
});
