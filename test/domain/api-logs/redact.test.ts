import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { omitted, REDACTED, redactedJson, redactedText } from '../../../src/domain/api-logs/redact.ts';

// The one redaction of the request logs: secrets by field name wherever they are, attachment contents,
// long strings cut, and a body still over the limit replaced by a marker.

const LIMIT = 10_240;
const kept = (value: unknown, limit = LIMIT) => JSON.parse(redactedJson(value, limit));

describe('request log redaction', () => {
  it('replaces the fields named like secrets at any depth, and nothing else', () => {
    const body = {
      object: 'api_key',
      token: 're_abc',
      nested: { signing_secret: 'whsec_x', Password: 'p', dkim_private_key: '-----BEGIN', list: [{ reset_token: 't' }] },
      name: 'kept',
      count: 3,
      none: null,
      flag: true,
    };
    assert.deepEqual(kept(body), {
      object: 'api_key',
      token: REDACTED,
      nested: { signing_secret: REDACTED, Password: REDACTED, dkim_private_key: REDACTED, list: [{ reset_token: REDACTED }] },
      name: 'kept',
      count: 3,
      none: null,
      flag: true,
    });
  });

  it('replaces the content of each attachment, as base64 or as bytes, and keeps the rest of it', () => {
    const body = {
      from: 'a@example.com',
      content: 'a field named content outside attachments is kept',
      attachments: [
        { filename: 'a.txt', content: Buffer.from('secret file').toString('base64') },
        { filename: 'b.bin', content: Array.from({ length: 100_000 }, (_, i) => i % 256), content_type: 'application/octet-stream' },
        { path: 'https://example.com/c.pdf' },
      ],
    };
    assert.deepEqual(kept(body), {
      from: 'a@example.com',
      content: 'a field named content outside attachments is kept',
      attachments: [
        { filename: 'a.txt', content: REDACTED },
        { filename: 'b.bin', content: REDACTED, content_type: 'application/octet-stream' },
        { path: 'https://example.com/c.pdf' },
      ],
    });
    // In a batch too: each email's attachments.
    assert.deepEqual(kept([{ attachments: [{ content: 'eA==' }] }]), [{ attachments: [{ content: REDACTED }] }]);
  });

  it('keeps a body within the limit whole; past it, cuts its long strings to a quarter of the limit, saying how much was cut', () => {
    const within = { subject: 'Hi', html: 'w'.repeat(LIMIT / 2) };
    assert.deepEqual(kept(within), within);
    const html = 'x'.repeat(50_000);
    const { html: cut, subject } = kept({ subject: 'Hi', html });
    assert.equal(subject, 'Hi');
    assert.equal(cut, `${'x'.repeat(LIMIT / 4)}… [${50_000 - LIMIT / 4} characters cut]`);
  });

  it('replaces a body still over the limit by a marker, whatever its size', () => {
    const batch = Array.from({ length: 100 }, () => ({ from: 'a@example.com', to: 'b@example.org', subject: 'Hello', html: 'y'.repeat(500) }));
    assert.deepEqual(kept(batch), omitted(LIMIT));
    assert.deepEqual(kept(Array.from({ length: 1_000_000 }, () => 1)), omitted(LIMIT));
    // Bytes, not characters: 4,000 three-byte characters are 12,000 bytes.
    assert.deepEqual(kept({ a: '€'.repeat(2000), b: '€'.repeat(2000) }, 8192), omitted(8192));
  });

  it('keeps JSON text that names no secret as it is, and sends any other through the same redaction', () => {
    const plain = '{ "from": "a@example.com",\n  "subject": "Hello" }';
    assert.equal(redactedText(plain, LIMIT), plain);
    assert.deepEqual(JSON.parse(redactedText('{"object":"api_key","id":"1","token":"re_x"}', LIMIT)), { object: 'api_key', id: '1', token: REDACTED });
    assert.deepEqual(JSON.parse(redactedText('{"attachments":[{"filename":"a","content":"eA=="}]}', LIMIT)), { attachments: [{ filename: 'a', content: REDACTED }] });
    // A name spelled with escapes is still a secret's name.
    assert.deepEqual(JSON.parse(redactedText('{"\\u0074oken":"re_x"}', LIMIT)), { token: REDACTED });
    assert.match(JSON.parse(redactedText(`{"html":"${'h'.repeat(2 * LIMIT)}"}`, LIMIT)).html, /^h{2560}… \[17920 characters cut\]$/);
    assert.deepEqual(JSON.parse(redactedText(`{"a":"${'z'.repeat(9 * LIMIT)}"}`, LIMIT)), omitted(LIMIT));
  });
});
