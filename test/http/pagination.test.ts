import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, startApp, type TestApp } from '../support/harness.ts';

async function list(t: TestApp, path: string, query: string) {
  const response = await t.fetch(`${path}${query}`);
  return { status: response.status, body: (await response.json()) as any };
}

for (const dialect of dialects) {
  describe(`cursor pagination (${dialect})`, () => {
    let t: TestApp;
    const sent: string[] = []; // oldest first
    before(async () => {
      t = await startApp(dialect, { worker: false });
      for (let i = 0; i < 45; i++) {
        const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: `#${i}`, text: 'x' });
        sent.push(data!.id);
      }
      for (let i = 0; i < 24; i++) await t.resend.apiKeys.create({ name: `key ${i}` });
    });
    after(() => t.close());

    it('pages newest first, 20 by default on a newer endpoint, with has_more', async () => {
      const { body } = await list(t, '/emails', '');
      assert.equal(body.object, 'list');
      assert.equal(body.has_more, true);
      assert.deepEqual(body.data.map((e: { id: string }) => e.id), sent.slice(-20).reverse());
    });

    it('walks forward with `after` and back with `before`, with no gap and no repeat', async () => {
      const forward: string[] = [];
      let cursor: string | undefined;
      const hasMore: boolean[] = [];
      do {
        const { data } = await t.resend.emails.list({ limit: 10, ...(cursor ? { after: cursor } : {}) });
        forward.push(...data!.data.map((e) => e.id));
        hasMore.push(data!.has_more);
        cursor = data!.has_more ? data!.data.at(-1)!.id : undefined;
      } while (cursor);
      assert.deepEqual(forward, [...sent].reverse());
      assert.deepEqual(hasMore, [true, true, true, true, false]);

      const back: string[] = [];
      cursor = sent[0];
      let more = true;
      while (more) {
        const { data } = await t.resend.emails.list({ limit: 10, before: cursor });
        back.unshift(...data!.data.map((e) => e.id));
        more = data!.has_more;
        cursor = data!.data[0]?.id;
      }
      assert.deepEqual(back, [...sent].slice(1).reverse(), 'everything newer than the oldest, in order');
    });

    it('excludes the cursor item and reports has_more in the direction of travel', async () => {
      const { body: older } = await list(t, '/emails', `?limit=5&after=${sent[5]}`);
      assert.deepEqual(older.data.map((e: { id: string }) => e.id), sent.slice(0, 5).reverse());
      assert.equal(older.has_more, false);
      const { body: newer } = await list(t, '/emails', `?limit=5&before=${sent[5]}`);
      assert.deepEqual(newer.data.map((e: { id: string }) => e.id), sent.slice(6, 11).reverse());
      assert.equal(newer.has_more, true);
      const { body: newest } = await list(t, '/emails', `?limit=5&before=${sent[39]}`);
      assert.deepEqual(newest.data.map((e: { id: string }) => e.id), sent.slice(40).reverse());
      assert.equal(newest.has_more, false);
    });

    it('keeps the order of items created in the same millisecond', async () => {
      // The test clock stands still: all 45 emails carry the same created_at.
      const { body } = await list(t, '/emails', '?limit=100');
      assert.equal(new Set(body.data.map((e: { created_at: string }) => e.created_at)).size, 1);
      assert.deepEqual(body.data.map((e: { id: string }) => e.id), [...sent].reverse());
    });

    it('an older endpoint returns everything when limit is omitted, and pages when it is given', async () => {
      const { body: all } = await list(t, '/api-keys', '');
      assert.equal(all.data.length, 25);
      assert.equal(all.has_more, false);
      const { body: page } = await list(t, '/api-keys', '?limit=10');
      assert.equal(page.data.length, 10);
      assert.equal(page.has_more, true);
    });

    it('refuses a bad limit, both cursors, or a malformed cursor with 422 validation_error', async () => {
      for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=-1', '?limit=2.5', '?limit=']) {
        for (const path of ['/emails', '/api-keys']) {
          const { status, body } = await list(t, path, query);
          assert.equal(status, 422, `${path}${query}`);
          assert.equal(body.name, 'validation_error');
          assert.match(body.message, /between 1 and 100/);
        }
      }
      const both = await list(t, '/emails', `?after=${sent[1]}&before=${sent[3]}`);
      assert.equal(both.status, 422);
      assert.equal(both.body.name, 'validation_error');
      const malformed = await list(t, '/emails', '?after=not-an-id');
      assert.equal(malformed.status, 422);
      assert.match(malformed.body.message, /`after`/);
    });
  });
}
