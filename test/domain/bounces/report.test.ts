import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readReport } from '../../../src/domain/bounces/report.ts';
import { arf, dsn } from '../../support/reports.ts';

describe('reading bounce and complaint reports', () => {
  it('reads every recipient block of a DSN, folded fields unfolded, and the original Message-ID', async () => {
    const raw = await dsn('bounces@x.test', '<id-1@example.com>', [
      { recipient: 'a@example.com', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1\r\n  user unknown' },
      { recipient: 'b@example.com', action: 'Delayed', status: '4.4.1 (timeout)' },
    ]);
    assert.deepEqual(readReport(raw), {
      kind: 'dsn',
      originalMessageId: '<id-1@example.com>',
      recipients: [
        { address: 'a@example.com', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' },
        { address: 'b@example.com', action: 'delayed', status: '4.4.1', diagnostic: undefined },
      ],
    });
  });

  it('reads an ARF report', async () => {
    assert.deepEqual(readReport(await arf('bounces@x.test', '<id-2@example.com>', 'c@example.com')), {
      kind: 'complaint',
      originalMessageId: '<id-2@example.com>',
      feedbackType: 'abuse',
      originalRecipient: 'c@example.com',
    });
  });

  it('is no report for plain mail, a report without its status part, or one without a boundary', () => {
    assert.equal(readReport(Buffer.from('Subject: hi\r\n\r\nhello')), undefined);
    assert.equal(readReport(Buffer.from('Content-Type: multipart/report; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n')), undefined);
    assert.equal(readReport(Buffer.from('Content-Type: multipart/report\r\n\r\n--b\r\n')), undefined);
  });
});
