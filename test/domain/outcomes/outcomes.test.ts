import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusOf } from '../../../src/delivery/smtp-reply.ts';
import { bounceOf, isNews, mailgunOutcome, postmarkOutcome, sendgridOutcome, sesOutcome, type RecipientOutcome } from '../../../src/domain/outcomes/outcomes.ts';

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

describe("providers' notifications, read as outcomes", () => {
  /** What an outcome records, and the bounce its webhook would say. */
  const reading = (o: RecipientOutcome | undefined) => o && { state: o.types.at(-1), permanent: o.permanent ?? false, proven: o.proven, ...(o.types.includes('bounced') ? bounceOf(o.response) : {}) };

  it('reads SES bounce types and subtypes as Resend\'s, the given status first, and complaints and deliveries', () => {
    assert.deepEqual(reading(sesOutcome({ kind: 'Bounce', bounceType: 'Permanent', bounceSubType: 'General', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 unknown' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'NoEmail' });
    assert.deepEqual(reading(sesOutcome({ kind: 'Bounce', bounceType: 'Permanent', bounceSubType: 'MessageTooLarge' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'MessageTooLarge' });
    assert.deepEqual(reading(sesOutcome({ kind: 'Bounce', bounceType: 'Permanent', bounceSubType: 'OnAccountSuppressionList' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'General' });
    assert.equal(sesOutcome({ kind: 'Bounce', bounceType: 'Transient', bounceSubType: 'MailboxFull' }, 'a@x.test')?.types.at(-1), 'delivery_delayed');
    assert.equal(sesOutcome({ kind: 'Bounce', bounceType: 'Transient', bounceSubType: 'MailboxFull' }, 'a@x.test')?.response, '4.2.2');
    assert.deepEqual(reading(sesOutcome({ kind: 'Bounce', bounceType: 'Undetermined', bounceSubType: 'Undetermined' }, 'a@x.test')), { state: 'bounced', permanent: false, proven: true, type: 'Undetermined', subType: 'Undetermined' });
    assert.equal(sesOutcome({ kind: 'Complaint', feedbackType: 'abuse' }, 'a@x.test')?.types.at(-1), 'complained');
    assert.equal(sesOutcome({ kind: 'Complaint', feedbackType: 'not-spam' }, 'a@x.test'), undefined);
    assert.equal(sesOutcome({ kind: 'Delivery', smtpResponse: '250 OK' }, 'a@x.test')?.types.at(-1), 'delivered');
    assert.equal(sesOutcome({ kind: 'Open' }, 'a@x.test'), undefined);
  });

  it("reads Postmark's, Mailgun's and SendGrid's words the same way", () => {
    assert.deepEqual(reading(postmarkOutcome({ recordType: 'Bounce', type: 'HardBounce', details: 'unknown user' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'NoEmail' });
    assert.equal(postmarkOutcome({ recordType: 'Bounce', type: 'SoftBounce', details: '' }, 'a@x.test')?.types.at(-1), 'delivery_delayed');
    assert.equal(postmarkOutcome({ recordType: 'Bounce', type: 'AutoResponder' }, 'a@x.test'), undefined);
    assert.equal(postmarkOutcome({ recordType: 'SpamComplaint', type: 'SpamComplaint' }, 'a@x.test')?.types.at(-1), 'complained');
    assert.deepEqual(reading(mailgunOutcome({ event: 'failed', severity: 'permanent', detail: '550 5.2.1 mailbox disabled' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'NoEmail' });
    assert.equal(mailgunOutcome({ event: 'failed', severity: 'temporary', detail: '452 4.2.2 full' }, 'a@x.test')?.response, '452 4.2.2 full');
    assert.equal(mailgunOutcome({ event: 'opened', detail: '' }, 'a@x.test'), undefined);
    assert.deepEqual(reading(sendgridOutcome({ event: 'bounce', type: 'bounce', status: '5.0.0', reason: '550 no such user' }, 'a@x.test')), { state: 'bounced', permanent: true, proven: true, type: 'Permanent', subType: 'General' });
    assert.equal(sendgridOutcome({ event: 'bounce', type: 'blocked', status: '4.7.0', reason: 'try later' }, 'a@x.test')?.types.at(-1), 'delivery_delayed');
    assert.deepEqual(reading(sendgridOutcome({ event: 'dropped', reason: 'Bounced Address' }, 'a@x.test')), { state: 'bounced', permanent: false, proven: true, type: 'Undetermined', subType: 'Undetermined' });
    assert.equal(sendgridOutcome({ event: 'spamreport' }, 'a@x.test')?.types.at(-1), 'complained');
  });

  it('takes a delivery as news only for a recipient not delivered yet', () => {
    const delivery = sesOutcome({ kind: 'Delivery' }, 'a@x.test')!;
    assert.equal(isNews(delivery, 'delivery_delayed'), true);
    assert.equal(isNews(delivery, 'bounced'), true);
    assert.equal(isNews(delivery, 'delivered'), false);
    assert.equal(isNews(delivery, 'opened'), false);
    assert.equal(isNews(sesOutcome({ kind: 'Complaint' }, 'a@x.test')!, 'delivered'), true);
  });
});
