import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusOf } from '../../../src/delivery/smtp-reply.ts';
import { bounceOf, classify, concernOf, dsnOutcome, isNews, listingOf, mailgunOutcome, postmarkOutcome, sendgridOutcome, sesOutcome, type RecipientOutcome } from '../../../src/domain/outcomes/outcomes.ts';

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

describe('whom a refusal is about (the table of docs/bounces.md, a row each)', () => {
  const refused = (stage: 'connection' | 'auth' | 'mail' | 'rcpt' | 'data', response: string) => ({ accepted: false, code: Number(response.slice(0, 3)), stage, response });

  it('no answer, a refused greeting, AUTH and MAIL FROM are about the sender: the email fails', () => {
    for (const answer of [
      refused('connection', '554 5.7.1 Service unavailable; client host blocked'),
      refused('auth', '535 5.7.8 Authentication credentials invalid'),
      refused('mail', '553 5.7.1 <bounces+x@send.example.com>: Sender address rejected: not owned by user mailer@relay.test'),
      refused('mail', '550 5.1.0 Envelope sender domain does not exist'),
    ]) {
      assert.equal(concernOf(answer), 'sender', answer.response);
      assert.equal(classify(answer), 'failed', answer.response);
    }
  });

  it('RCPT TO and DATA answers whose wording names the sender or the relay policy are about the sender', () => {
    for (const answer of [
      refused('rcpt', '554 5.7.1 <a@example.com>: Relay access denied'),
      refused('rcpt', '553 5.7.1 <x@example.com>: Sender address rejected: Domain not found'),
      refused('data', '554 5.2.252 SendAsDenied; mailer@contoso.com not allowed to send as news@example.com'),
      refused('data', '554 Message rejected: Email address is not verified. The following identities failed the check'),
      refused('data', '550 5.7.60 SMTP; Client does not have permissions to send as this sender'),
    ]) assert.equal(concernOf(answer), 'sender', answer.response);
  });

  it('RCPT TO otherwise is about the recipient: a bounce that suppresses', () => {
    const answer = refused('rcpt', '550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown');
    assert.equal(concernOf(answer), 'recipient');
    assert.equal(classify(answer), 'bounced');
    assert.equal(concernOf(refused('rcpt', '550 No such user here')), 'recipient', 'without a status too');
  });

  it('DATA with an address or mailbox status is about the recipient', () => {
    for (const response of ['550 5.1.1 The email account that you tried to reach does not exist', '552 5.2.2 Mailbox full', '550 5.2.1 Mailbox disabled']) {
      assert.equal(concernOf(refused('data', response)), 'recipient', response);
    }
  });

  it('DATA otherwise is about the message: a bounce that does not suppress', () => {
    for (const response of ['554 5.7.1 Message rejected as spam', '552 5.3.4 Message too big for system', '554 5.6.0 Content refused', '554 Transaction failed']) {
      const answer = refused('data', response);
      assert.equal(concernOf(answer), 'message', response);
      assert.equal(classify(answer), 'bounced', response);
    }
  });

  it('a 4xx is deferred whoever it is about, and an accepted recipient delivered', () => {
    assert.equal(classify(refused('mail', '451 4.3.0 Try again later')), 'deferred');
    assert.equal(classify({ accepted: false, code: undefined, stage: 'connection', response: 'connection refused' }), 'deferred');
    assert.equal(classify({ accepted: true, code: 250, response: '250 OK' }), 'delivered');
  });

  it('reads a DSN by the same table: a 5.x.x about the mailbox suppresses, one about the message does not', () => {
    const block = (status: string, diagnostic: string) => ({ action: 'failed', status, diagnostic });
    const gone = dsnOutcome(block('5.1.1', 'smtp; 550 5.1.1 user unknown'), 'gone@example.com', true)!;
    const spam = dsnOutcome(block('5.7.1', 'smtp; 554 5.7.1 rejected as spam'), 'fine@example.com', true)!;
    assert.deepEqual([gone.types, listingOf(gone)], [['bounced'], 'bounce']);
    assert.deepEqual([spam.types, listingOf(spam)], [['bounced'], undefined]);
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
