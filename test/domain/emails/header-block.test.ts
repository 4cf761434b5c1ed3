import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldValue, joinMessage, splitMessage } from '../../../src/domain/emails/header-block.ts';

// The header block of a submitted message, edited without touching any other byte.

describe('a header block', () => {
  it('reads folded fields, keeps every byte, and joins back to the same message', () => {
    const raw = Buffer.from('Subject: a long\r\n\tsubject\r\nFrom: Ada <ada@example.com>\r\nX-Bin: \xe9t\xe9\r\n\r\nbody\r\n\r\nmore\r\n', 'latin1');
    const message = splitMessage(raw);
    assert.deepEqual(message.fields.map((f) => f.name), ['subject', 'from', 'x-bin']);
    assert.equal(fieldValue(message, 'subject'), 'a long subject');
    assert.equal(message.rest.toString(), '\r\nbody\r\n\r\nmore\r\n');
    assert.deepEqual(joinMessage([], message.fields, message.rest), raw);
  });

  it('adds fields first and leaves out those removed', () => {
    const message = splitMessage(Buffer.from('Bcc: hidden@example.org\nSubject: s\n\nbody\n'));
    const kept = message.fields.filter((f) => f.name !== 'bcc');
    assert.equal(joinMessage(['Message-ID: <1@example.com>'], kept, message.rest).toString(), 'Message-ID: <1@example.com>\r\nSubject: s\n\nbody\n');
  });

  it('takes a message of headers only, and one without headers', () => {
    const headersOnly = splitMessage(Buffer.from('Subject: s\r\n'));
    assert.deepEqual([headersOnly.fields.length, headersOnly.rest.toString()], [1, '\r\n']);
    const bodyOnly = splitMessage(Buffer.from('\r\njust a body\r\n'));
    assert.deepEqual([bodyOnly.fields.length, bodyOnly.rest.toString()], [0, '\r\njust a body\r\n']);
  });
});
