import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { dkimVerify } from 'mailauth';
import { seal, unseal } from '../../src/secrets/encryption.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// DKIM signatures checked by a real verifier (mailauth) against the key record served by a DNS
// server started here, exactly as GET /domains/:id lists it.

for (const dialect of dialects) {
  describe(`DKIM signing (${dialect})`, () => {
    let dns: TestDnsServer;
    let smtp: TestSmtpServer;
    let t: TestApp;
    const verify = (raw: Buffer | string) =>
      dkimVerify(raw, { resolver: (name: string, type: string) => dns.resolver.resolve(name, type) as Promise<string[]> });

    before(async () => {
      dns = await startDnsServer();
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, DNS_SERVERS: dns.address } });
      const { data } = await t.resend.domains.create({ name: 'signed.test' });
      publishRecords(dns, data as never, ['DKIM']);
    });
    after(async () => {
      await t.close();
      await smtp.close();
      await dns.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    async function deliver(email: Parameters<TestApp['resend']['emails']['send']>[0]) {
      const { data, error } = await t.resend.emails.send(email);
      assert.equal(error, null);
      await eventually(async () => (await t.resend.emails.get(data.id)).data?.last_event === 'delivered' || undefined);
      return smtp.messages.find((m) => m.parsed.messageId?.startsWith(`<${data.id}@`))!;
    }

    it('signs every message from a domain with a key: rsa-sha256, relaxed/relaxed, the headers that matter; mailauth verifies it', async () => {
      const message = await deliver({
        from: 'Acme <news@signed.test>',
        to: ['a@example.org', 'b@example.net'],
        cc: 'c@example.org',
        replyTo: 'help@signed.test',
        subject: 'Signed ✓',
        html: '<p>Hello   <b>there</b></p>',
        headers: { 'List-Unsubscribe': '<https://signed.test/u/1>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        attachments: [{ filename: 'a.txt', content: Buffer.from('attached') }],
      });
      const headers = message.raw.toString().split('\r\n\r\n')[0]!;
      assert.equal(headers.match(/^DKIM-Signature:/gim)?.length, 1, 'one signature');

      // mailauth's results carry more than its types say: the algorithm, canonicalization and signed headers.
      const [result] = (await verify(message.raw)).results as unknown as { status: { result: string }; info: string; signingDomain: string; selector: string; algo: string; format: string; signingHeaders: { keys: string } }[];
      assert.equal(result!.status.result, 'pass', result!.info);
      assert.equal(result!.signingDomain, 'signed.test');
      assert.equal(result!.selector, 'mailroom');
      assert.equal(result!.algo, 'rsa-sha256');
      assert.equal(result!.format, 'relaxed/relaxed');
      const signed = result!.signingHeaders.keys.toLowerCase().split(/:\s*/);
      for (const header of ['from', 'to', 'cc', 'reply-to', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'list-unsubscribe', 'list-unsubscribe-post']) {
        assert.ok(signed.includes(header), `${header} is signed`);
      }
    });

    it('a changed body or header no longer verifies: the verifier really checks', async () => {
      const message = await deliver({ from: 'news@signed.test', to: 'a@example.org', subject: 'Original', text: 'Original words' });
      const raw = message.raw.toString();
      const body = (await verify(raw.replace('Original words', 'Other words'))).results[0]!;
      assert.equal(body.status.result, 'neutral');
      assert.match(body.info, /body hash did not verify/);
      assert.equal((await verify(raw.replace('Subject: Original', 'Subject: Changed'))).results[0]!.status.result, 'fail');
      const published = dns.zone.get('mailroom._domainkey.signed.test')!;
      dns.zone.delete('mailroom._domainkey.signed.test');
      try {
        assert.notEqual((await verify(message.raw)).results[0]!.status.result, 'pass', 'no key published, no pass');
      } finally {
        dns.zone.set('mailroom._domainkey.signed.test', published);
      }
    });

    it('leaves mail from a domain that is not a Mailroom domain unsigned', async () => {
      const message = await deliver({ from: 'news@elsewhere.test', to: 'a@example.org', subject: 'Plain', text: 'Plain' });
      assert.doesNotMatch(message.raw.toString(), /^DKIM-Signature:/im);
    });

    it('a deleted domain’s key is no longer used', async () => {
      const { data } = await t.resend.domains.create({ name: 'brief.test' });
      publishRecords(dns, data as never, ['DKIM']);
      assert.equal((await verify((await deliver({ from: 'a@brief.test', to: 'x@example.org', subject: 's', text: 't' })).raw)).results[0]!.status.result, 'pass');
      await t.resend.domains.remove(data!.id);
      const message = await deliver({ from: 'a@brief.test', to: 'x@example.org', subject: 's', text: 't' });
      assert.doesNotMatch(message.raw.toString(), /^DKIM-Signature:/im);
    });
  });
}

describe('sealing secrets at rest (encryption.ts)', () => {
  const secret = 's'.repeat(40);
  it('opens only with the same secret, purpose and context', () => {
    const sealed = seal(secret, 'dkim-private-key', 'domain-1', 'the private key');
    assert.doesNotMatch(sealed, /private key/);
    assert.notEqual(seal(secret, 'dkim-private-key', 'domain-1', 'the private key'), sealed, 'a fresh IV each time');
    assert.equal(unseal(secret, 'dkim-private-key', 'domain-1', sealed), 'the private key');
    // AES-GCM's own refusal: the tag does not authenticate the ciphertext under that key and context.
    const refused = { name: 'Error', message: 'Unsupported state or unable to authenticate data' };
    assert.throws(() => unseal('t'.repeat(40), 'dkim-private-key', 'domain-1', sealed), refused);
    assert.throws(() => unseal(secret, 'other-purpose', 'domain-1', sealed), refused);
    assert.throws(() => unseal(secret, 'dkim-private-key', 'domain-2', sealed), refused);
    assert.throws(() => unseal(secret, 'dkim-private-key', 'domain-1', sealed.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))), refused);
  });
});
