import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bounceAddress, readBounceAddress, signedRecipient, verpKey } from '../../../src/domain/bounces/verp.ts';

describe('VERP bounce addresses', () => {
  const key = verpKey('test-secret-test-secret-test-secret-0123456789');
  const emailId = '0192e3a4-4444-7000-8000-00000000abcd';
  const recipients = ['a@example.com', 'B@Example.com'];

  it('names the email and the recipient, within a 64-character local part', () => {
    const address = bounceAddress(key, emailId, 'B@Example.com', 'mail.example.com');
    assert.ok(address.split('@')[0]!.length <= 64);
    const token = readBounceAddress(address)!;
    assert.equal(token.emailId, emailId);
    assert.equal(signedRecipient(key, emailId, token.signature, recipients), 'B@Example.com');
    assert.equal(signedRecipient(key, emailId, readBounceAddress(address.toUpperCase())!.signature, recipients), 'B@Example.com', 'case does not matter');
  });

  it('cannot be forged: another key, email or recipient does not verify', () => {
    const address = bounceAddress(key, emailId, 'a@example.com', 'mail.example.com');
    const { signature } = readBounceAddress(address)!;
    assert.equal(signedRecipient(verpKey('another-secret-another-secret-another-secret'), emailId, signature, recipients), undefined);
    assert.equal(signedRecipient(key, '0192e3a4-4444-7000-8000-00000000abce', signature, recipients), undefined);
    assert.equal(signedRecipient(key, emailId, signature, ['b@example.com']), undefined);
    assert.equal(readBounceAddress('bounces+short@mail.example.com'), undefined);
  });
});
