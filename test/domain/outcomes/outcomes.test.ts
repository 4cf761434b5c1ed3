import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusOf } from '../../../src/delivery/smtp-reply.ts';
import { bounceOf } from '../../../src/domain/outcomes/outcomes.ts';

describe('bounce classification', () => {
  it('reads the enhanced status code of an answer, or its reply code alone', () => {
    assert.equal(statusOf('550 5.1.1 <a@b.c>: Recipient address rejected'), '5.1.1');
    assert.equal(statusOf('smtp; 552-5.2.2 The email account is over quota'), '5.2.2');
    assert.equal(statusOf('5.1.10'), '5.1.10');
    assert.equal(statusOf('554 Transaction failed'), '5.0.0');
    assert.equal(statusOf('connection lost'), undefined);
  });

  it('gives Resend type and subtype by the table of docs/bounces.md', () => {
    const cases: [string, string, string][] = [
      ['550 5.1.1 No such user', 'Permanent', 'NoEmail'],
      ['550 5.1.10 Null MX', 'Permanent', 'NoEmail'],
      ['552 5.2.2 Mailbox full', 'Permanent', 'MailboxFull'],
      ['552 5.3.4 Message too big', 'Permanent', 'MessageTooLarge'],
      ['554 5.6.1 Media not supported', 'Permanent', 'AttachmentRejected'],
      ['550 5.7.1 Message rejected as spam', 'Permanent', 'MessageRejected'],
      ['554 5.4.4 Unable to route', 'Permanent', 'General'],
      ['550 Requested action not taken', 'Permanent', 'General'],
      ['452 4.2.2 Over quota', 'Transient', 'MailboxFull'],
      ['no status at all', 'Undetermined', 'Undetermined'],
    ];
    for (const [answer, type, subType] of cases) assert.deepEqual(bounceOf(answer), { type, subType }, answer);
  });
});
