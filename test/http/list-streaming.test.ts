// The older endpoints' lists without `limit` (Resend answers every item): streamed slice by slice once
// a list outgrows one, with the bytes a single answer would have had.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { finished } from 'node:stream/promises';
import { toTimestamp } from '../../src/time/clock.ts';
import { newId } from '../../src/time/ids.ts';
import { SLICE_ROWS } from '../../src/store/paginate.ts';
import { DEFAULT_PROJECT_ID } from '../../src/store/projects.ts';
import { dialects, startApp, type TestApp } from '../support/harness.ts';

const CONTACTS = SLICE_ROWS * 5;
const ROWS = SLICE_ROWS * 2 + 1; // of each other resource: three slices, the last of one row
const MISSING = '01a2007a-0000-7000-8000-000000000000';

/** A list read page by page (`limit=100`), each page serialized as any page is. */
async function walkPages(t: TestApp, path: string): Promise<{ id: string }[]> {
  const rows: { id: string }[] = [];
  let cursor: string | undefined;
  do {
    const query = `limit=100${cursor ? `&after=${cursor}` : ''}`;
    const page = (await (await t.fetch(`${path}${path.includes('?') ? '&' : '?'}${query}`)).json()) as any;
    rows.push(...page.data);
    cursor = page.has_more ? page.data.at(-1).id : undefined;
  } while (cursor);
  return rows;
}

function assertStreamed(response: Response, path: string): void {
  assert.equal(response.status, 200, path);
  assert.equal(response.headers.get('transfer-encoding'), 'chunked', path);
  assert.equal(response.headers.get('content-length'), null, path);
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8', path);
}

for (const dialect of dialects) {
  describe(`lists without limit, streamed (${dialect})`, () => {
    let t: TestApp;
    let everyone: string;
    const contacts: string[] = []; // oldest first
    const now = toTimestamp(Date.now());
    before(async () => {
      t = await startApp(dialect, { worker: false });
      everyone = (await t.resend.segments.create({ name: 'Even ones' })).data!.id;
      for (let i = 0; i < CONTACTS; i++) contacts.push(newId());
      const segments = Array.from({ length: ROWS }, (_, i) => ({ id: newId(), project_id: DEFAULT_PROJECT_ID, name: `S${i}`, created_at: now }));
      const newest = contacts.at(-1)!;
      // Straight into the tables: thousands of rows in one transaction.
      await t.ctx.writer.insert({
        contacts: contacts.map((id, i) => ({
          id,
          project_id: DEFAULT_PROJECT_ID,
          email: `c${i}@example.com`,
          first_name: `First${i}`,
          last_name: i % 3 === 0 ? null : `Last${i}`,
          unsubscribed: i % 7 === 0 ? 1 : 0,
          created_at: now,
        })),
        segments,
        segment_contacts: [
          ...contacts.filter((_, i) => i % 2 === 0).map((contact_id) => ({ segment_id: everyone, contact_id })),
          ...segments.map((s) => ({ segment_id: s.id, contact_id: newest })),
        ],
        api_keys: Array.from({ length: ROWS }, (_, i) => ({
          id: newId(),
          project_id: DEFAULT_PROJECT_ID,
          name: `key ${i}`,
          token_hash: `hash ${i}`,
          permission: 'full_access' as const,
          domain_id: null,
          created_at: now,
          last_used_at: i % 2 ? now : null,
          configured: 0,
        })),
        domains: Array.from({ length: ROWS }, (_, i) => ({
          id: newId(),
          project_id: DEFAULT_PROJECT_ID,
          name: `d${i}.example.com`,
          status: 'not_started',
          record_statuses: '{}',
          verify_started_at: null,
          region: 'us-east-1',
          custom_return_path: 'send',
          open_tracking: i % 2,
          click_tracking: 0,
          tracking_subdomain: null,
          tls: 'opportunistic',
          sending: 'enabled',
          receiving: 'disabled',
          dkim_selector: 'mailroom',
          dkim_public_key: 'key',
          dkim_private_key: 'sealed',
          created_at: now,
        })),
        broadcasts: Array.from({ length: ROWS }, (_, i) => ({
          id: newId(),
          project_id: DEFAULT_PROJECT_ID,
          name: i % 2 ? `B${i}` : null,
          segment_id: everyone,
          topic_id: null,
          from: 'news@example.com',
          subject: 'Hello',
          reply_to: null,
          preview_text: null,
          html: '<p>Hello</p>',
          text: null,
          status: 'draft' as const,
          created_at: now,
          scheduled_at: null,
          sent_at: null,
          property_fallbacks: null,
          fanout_cursor: null,
        })),
      });
    });
    after(() => t.close());

    it('answers every contact once, newest first, through the SDK', async () => {
      const { data, error } = await t.resend.contacts.list();
      assert.equal(error, null);
      assert.equal(data.object, 'list');
      assert.equal(data.has_more, false);
      assert.deepEqual(data.data.map((c) => c.id), [...contacts].reverse());
      assert.deepEqual(data.data.at(-1), {
        id: contacts[0],
        email: 'c0@example.com',
        first_name: 'First0',
        last_name: null,
        created_at: data.data.at(-1)!.created_at,
        unsubscribed: true,
      });
    });

    it('streams it: chunked, with no length, as JSON; a page with a limit is one answer as before', async () => {
      const response = await t.fetch('/contacts');
      assertStreamed(response, '/contacts');
      assert.equal(((await response.json()) as any).data.length, CONTACTS);
      const page = await t.fetch('/contacts?limit=100');
      assert.equal(page.headers.get('transfer-encoding'), null);
      assert.ok(Number(page.headers.get('content-length')) > 0);
      assert.equal(((await page.json()) as any).data.length, 100);
    });

    it('answers each older list whole: its pages put together, byte for byte, every row once', async () => {
      const lists: [string, number][] = [
        ['/contacts', CONTACTS],
        [`/contacts?segment_id=${everyone}`, CONTACTS / 2],
        [`/segments/${everyone}/contacts`, CONTACTS / 2],
        [`/audiences/${everyone}/contacts`, CONTACTS / 2],
        ['/segments', ROWS + 1],
        ['/audiences', ROWS + 1],
        [`/contacts/${contacts.at(-1)}/segments`, ROWS],
        ['/api-keys', ROWS + 1],
        ['/domains', ROWS],
        ['/broadcasts', ROWS],
      ];
      for (const [path, count] of lists) {
        const response = await t.fetch(path);
        assertStreamed(response, path);
        const pages = await walkPages(t, path);
        assert.equal(await response.text(), JSON.stringify({ object: 'list', has_more: false, data: pages }), path);
        assert.equal(new Set(pages.map((row) => row.id)).size, count, path);
      }
    });

    it('starts after or before a cursor: every older contact, or every newer one, newest first', async () => {
      const cursor = contacts[SLICE_ROWS * 2 + 10]!;
      const older = await t.resend.contacts.list({ after: cursor });
      assert.deepEqual(older.data!.data.map((c) => c.id), contacts.slice(0, SLICE_ROWS * 2 + 10).reverse());
      const newer = await t.resend.contacts.list({ before: cursor });
      assert.deepEqual(newer.data!.data.map((c) => c.id), contacts.slice(SLICE_ROWS * 2 + 11).reverse());
      assert.equal(newer.data!.has_more, false);
    });

    it('answers a Resend error, not a stream, when the segment or the contact does not exist', async () => {
      for (const path of [`/segments/${MISSING}/contacts`, `/contacts?segment_id=${MISSING}`, `/contacts/${MISSING}/segments`]) {
        const response = await t.fetch(path);
        assert.equal(response.status, 404, path);
        assert.equal(((await response.json()) as any).name, 'not_found', path);
      }
    });
  });

  describe(`a database error while a list is streamed (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      // Wide rows: a slice (about 10 MB) cannot fit in the sockets' buffers while the client waits. The
      // stream reads one slice ahead of the one it writes, so the third is read only once the client reads on.
      const wide = 'x'.repeat(20_000);
      const now = toTimestamp(Date.now());
      await t.ctx.writer.insert({
        contacts: Array.from({ length: SLICE_ROWS * 3 }, (_, i) => ({
          id: newId(),
          project_id: DEFAULT_PROJECT_ID,
          email: `w${i}@example.com`,
          first_name: wide,
          last_name: null,
          unsubscribed: 0,
          created_at: now,
        })),
      });
    });
    after(() => t.close());

    it('cuts the response short rather than leaving the client waiting, and keeps serving', async () => {
      const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get(`${t.url}/contacts`, { headers: { authorization: `Bearer ${t.token}` } }, resolve).on('error', reject);
      });
      response.pause();
      assert.equal(response.statusCode, 200);
      // The first slice is on its way; the table the third is to be read from is gone.
      await t.ctx.db.schema.alterTable('contacts').renameTo('contacts_gone').execute();
      response.resume();
      await assert.rejects(finished(response), { code: 'ECONNRESET', message: 'aborted' });
      assert.equal((await t.fetch('/health')).status, 200);
    });
  });
}
