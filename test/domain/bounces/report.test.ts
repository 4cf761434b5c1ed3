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
    const messageId = /^Message-ID: (.*)\r$/m.exec(raw.toString())![1]!;
    assert.deepEqual(readReport(raw), {
      kind: 'dsn',
      receipt: messageId,
      originalMessageId: '<id-1@example.com>',
      recipients: [
        { address: 'a@example.com', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' },
        { address: 'b@example.com', action: 'delayed', status: '4.4.1', diagnostic: undefined },
      ],
    });
  });

  it('reads an ARF report', async () => {
    const raw = await arf('bounces@x.test', '<id-2@example.com>', 'c@example.com');
    assert.deepEqual(readReport(raw), {
      kind: 'complaint',
      receipt: /^Message-ID: (.*)\r$/m.exec(raw.toString())![1]!,
      originalMessageId: '<id-2@example.com>',
      feedbackType: 'abuse',
      originalRecipient: 'c@example.com',
    });
  });

  it('names a report without a Message-ID by a hash of its body, the same however its headers change on the way', async () => {
    const raw = (await dsn('bounces@x.test', '<id-3@example.com>', [{ recipient: 'a@example.com', action: 'failed', status: '5.1.1' }])).toString().replace(/^Message-ID: .*\r\n/m, '');
    const first = readReport(Buffer.from(raw))!;
    assert.match(first.receipt, /^sha256:[0-9a-f]{64}$/);
    assert.equal(readReport(Buffer.from(`Received: from relay.test by mx.test; ${new Date().toUTCString()}\r\n${raw}`))!.receipt, first.receipt);
    const other = (await dsn('bounces@x.test', '<id-4@example.com>', [{ recipient: 'a@example.com', action: 'failed', status: '5.1.1' }])).toString().replace(/^Message-ID: .*\r\n/m, '');
    assert.notEqual(readReport(Buffer.from(other))!.receipt, first.receipt);
  });

  it('is no report for plain mail, a report without its status part, or one without a boundary', () => {
    assert.equal(readReport(Buffer.from('Subject: hi\r\n\r\nhello')), undefined);
    assert.equal(readReport(Buffer.from('Content-Type: multipart/report; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n')), undefined);
    assert.equal(readReport(Buffer.from('Content-Type: multipart/report\r\n\r\n--b\r\n')), undefined);
  });
});
