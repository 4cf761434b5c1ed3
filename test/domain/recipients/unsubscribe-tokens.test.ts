import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUnsubscribeToken, readUnsubscribeToken, unsubscribeKey } from '../../../src/domain/recipients/unsubscribe-tokens.ts';

const key = unsubscribeKey('s'.repeat(40));
const claims = { contactId: '01a20080-28d9-7f92-b715-a17141469599', broadcastId: '01a20080-28d9-7f92-b715-a17141469500', topicId: null };

describe('unsubscribe tokens', () => {
  it('read back what they were made with', () => {
    const token = createUnsubscribeToken(key, claims);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(readUnsubscribeToken(key, token), claims);
    const withTopic = { ...claims, topicId: '01a20080-28d9-7f92-b715-a17141469501' };
    assert.deepEqual(readUnsubscribeToken(key, createUnsubscribeToken(key, withTopic)), withTopic);
  });

  it('cannot be altered to name another contact, nor forged without the secret', () => {
    const token = createUnsubscribeToken(key, claims);
    const [, signature] = token.split('.');
    const other = Buffer.from(JSON.stringify(['01a20080-0000-7f92-b715-a17141469599', claims.broadcastId, null])).toString('base64url');
    assert.equal(readUnsubscribeToken(key, `${other}.${signature}`), undefined);
    assert.equal(readUnsubscribeToken(unsubscribeKey('t'.repeat(40)), token), undefined);
    for (const bad of ['', 'abc', `${token}.x`, `${token.slice(0, -2)}xx`, '.', 'a.b']) {
      assert.equal(readUnsubscribeToken(key, bad), undefined, bad);
    }
  });
});
