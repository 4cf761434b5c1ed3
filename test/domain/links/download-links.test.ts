import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DOWNLOAD_LIFETIME_MS, downloadUrl } from '../../../src/domain/links/download-links.ts';
import { dialects, followLink, startApp, type TestApp } from '../../support/harness.ts';

/** A link followed with no API key: the file, or the JSON error. */
async function open(t: TestApp, link: string): Promise<{ status: number; body: any }> {
  const response = await followLink(t, link);
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, body: type.startsWith('application/json') ? await response.json() : Buffer.from(await response.arrayBuffer()) };
}

/** The link with one query parameter or path segment replaced. */
function altered(link: string, change: (url: URL) => void): string {
  const url = new URL(link);
  change(url);
  return url.toString();
}

const NOT_VALID = /^Download link not valid/;

for (const dialect of dialects) {
  describe(`download links (${dialect})`, () => {
    let t: TestApp;
    let link: string;
    const bytes = Buffer.from('%PDF-1.7 not really');
    before(async () => {
      t = await startApp(dialect, { worker: false });
      const { data } = await t.resend.emails.send({
        from: 'hello@example.com',
        to: 'user@example.com',
        subject: 'A file',
        text: 'Attached.',
        attachments: [{ filename: 'file.pdf', content: bytes }],
      });
      link = (await t.resend.emails.attachments.list({ emailId: data!.id })).data!.data[0]!.download_url;
    });
    after(() => t.close());

    it('serves the file with no API key while the link is fresh', async () => {
      assert.match(link, /^http:\/\/localhost:0\/downloads\/email-attachment\/[0-9a-f-]{36}\.0\?expires=\d+&signature=[\w-]{43}$/);
      assert.deepEqual(await open(t, link), { status: 200, body: bytes });
    });

    it('refuses a link with any part altered or missing, in Resend’s error shape', async () => {
      const signature = new URL(link).searchParams.get('signature')!;
      const expires = new URL(link).searchParams.get('expires')!;
      const changes: [string, (url: URL) => void][] = [
        ['signature', (url) => url.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`)],
        ['signature cut short', (url) => url.searchParams.set('signature', signature.slice(0, -1))],
        ['no signature', (url) => url.searchParams.delete('signature')],
        ['expires, later', (url) => url.searchParams.set('expires', String(Number(expires) + 3600))],
        ['expires, written otherwise', (url) => url.searchParams.set('expires', `0${expires}`)],
        ['no expires', (url) => url.searchParams.delete('expires')],
        ['id: another position', (url) => (url.pathname = url.pathname.replace(/\.0$/, '.1'))],
        ['id: another email', (url) => (url.pathname = url.pathname.replace(/[0-9a-f](?=\.0$)/, (c) => (c === '0' ? '1' : '0')))],
        ['kind', (url) => (url.pathname = url.pathname.replace('email-attachment', 'received-attachment'))],
      ];
      for (const [what, change] of changes) {
        const { status, body } = await open(t, altered(link, change));
        assert.equal(status, 404, what);
        assert.equal(body.name, 'not_found', what);
        assert.equal(body.statusCode, 404, what);
        assert.match(body.message, NOT_VALID, what);
      }
    });

    it('refuses a link signed with a past expiry, and a fresh one once it expires', async () => {
      const id = new URL(link).pathname.split('/').pop()!;
      const past = await open(t, downloadUrl(t.ctx, { kind: 'email-attachment', id }, t.clock.now() - 1000));
      assert.equal(past.status, 404);
      assert.match(past.body.message, /^Download link expired/);
      const expires = Number(new URL(link).searchParams.get('expires')) * 1000;
      t.clock.advance(expires - t.clock.now());
      assert.equal((await open(t, link)).status, 200, 'good to its last second');
      t.clock.advance(1000);
      const { status, body } = await open(t, link);
      assert.deepEqual({ status, name: body.name }, { status: 404, name: 'not_found' });
      assert.match(body.message, /^Download link expired/);
    });

    it('answers 404 for a validly signed link to a file that is not there', async () => {
      const gone = downloadUrl(t.ctx, { kind: 'email-attachment', id: '0192e3a4-1111-7000-8000-000000000000.0' }, t.clock.now() + DOWNLOAD_LIFETIME_MS);
      const { status, body } = await open(t, gone);
      assert.deepEqual({ status, body }, { status: 404, body: { statusCode: 404, name: 'not_found', message: 'Download not found' } });
    });
  });
}
