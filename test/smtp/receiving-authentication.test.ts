import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dialects, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';

// SPF, DKIM and DMARC of received mail, checked by mailauth against records a real DNS server serves.

const rsaKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicKeyText = (key: ReturnType<typeof rsaKey>) => key.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

for (const dialect of dialects) {
  describe(`authentication of received mail (${dialect})`, () => {
    let t: TestApp;
    let dns: TestDnsServer;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    const published = rsaKey();

    before(async () => {
      dns = await startDnsServer();
      dns.add('signer.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
      dns.add('_dmarc.signer.test', { TXT: ['v=DMARC1; p=reject'] });
      dns.add('sel._domainkey.signer.test', { TXT: [`v=DKIM1; k=rsa; p=${publicKeyText(published)}`] });
      dns.add('forger.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
      dns.add('_dmarc.forger.test', { TXT: ['v=DMARC1; p=reject'] });
      t = await startApp(dialect, { env: { ...INBOUND_ENV, DNS_SERVERS: dns.address } });
      inbound = await startInbound(t);
      await receivingDomain(t, 'inbox.test');
    });
    after(async () => {
      await inbound.close();
      await t.close();
      await dns.close();
    });

    async function authenticationOf(from: string, privateKey: string) {
      const sent = await sendTo(inbound.port, {
        from,
        to: 'me@inbox.test',
        subject: 'signed',
        text: 'hello',
        dkim: { domainName: 'signer.test', keySelector: 'sel', privateKey },
      });
      const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;
      return (await t.resend.emails.receiving.get(id)).data as unknown as { authentication: Record<string, string> };
    }

    it('passes a message signed with the key the sender publishes, from an address SPF allows', async () => {
      const email = await authenticationOf('a@signer.test', published.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
      assert.deepEqual(email.authentication, { spf: 'pass', dkim: 'pass', dmarc: 'pass' });
    });

    it('fails a forged signature (another key) and a sender SPF does not allow', async () => {
      const forged = rsaKey().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      assert.equal((await authenticationOf('a@signer.test', forged)).authentication.dkim, 'fail');
      assert.deepEqual(await authenticationOf('a@forger.test', forged).then((e) => e.authentication), { spf: 'fail', dkim: 'fail', dmarc: 'fail' });
    });
  });
}
