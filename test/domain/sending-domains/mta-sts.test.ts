import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { receivingDomain } from '../../support/inbound.ts';

// MTA-STS for the domains that receive here: the policy served at /.well-known/mta-sts.txt to a request
// whose Host is mta-sts.<domain>, and the records to publish, whose id follows the policy.

/** GET the policy as a sender does, through a real HTTP client, with the Host header it would send. */
function policyAs(t: TestApp, host: string): Promise<{ status: number; type: string | undefined; body: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/.well-known/mta-sts.txt', headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

type Records = { record: string; name: string; type: string; value: string }[];
const recordsOf = async (t: TestApp, id: string) => ((await t.resend.domains.get(id)).data as unknown as { records: Records }).records;

for (const dialect of dialects) {
  describe(`MTA-STS for own domains (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_HOSTNAME: 'mx.mailroom.test', MAILROOM_PUBLIC_URL: 'https://mail.mailroom.test' } });
    });
    after(() => t.close());

    it('serves the policy of a domain that receives to mta-sts.<domain>, 404 to any other host', async () => {
      const domain = await receivingDomain(t, 'inbox.test');
      const served = await policyAs(t, 'mta-sts.inbox.test');
      assert.equal(served.status, 200);
      assert.match(served.type ?? '', /^text\/plain/);
      // The self-signed certificate: senders that check would refuse it, so they only report.
      assert.equal(served.body, 'version: STSv1\r\nmode: testing\r\nmx: mx.mailroom.test\r\nmax_age: 604800\r\n');
      assert.equal((await policyAs(t, 'MTA-STS.Inbox.Test:443')).body, served.body, 'case and port do not matter');

      const { data: sender } = await t.resend.domains.create({ name: 'sends.test' });
      for (const host of ['mta-sts.sends.test', 'mta-sts.unknown.test', 'inbox.test', '127.0.0.1']) {
        const answer = await policyAs(t, host);
        assert.equal(answer.status, 404, host);
        assert.equal(JSON.parse(answer.body).name, 'not_found', host);
      }
      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities: { sending: 'enabled' } });
      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities: { receiving: 'disabled' } });
      assert.equal((await policyAs(t, 'mta-sts.inbox.test')).status, 404, 'no longer receiving');
      assert.ok(sender);
    });

    it("lists the policy's host, its _mta-sts id and _smtp._tls among a receiving domain's records", async () => {
      const domain = await receivingDomain(t, 'records.test');
      const records = await recordsOf(t, domain.id);
      const sts = records.filter((r) => r.record === 'MTA-STS');
      assert.deepEqual(sts.map(({ name, type }) => [name, type]), [['mta-sts', 'CNAME'], ['_mta-sts', 'TXT']]);
      assert.equal(sts[0]!.value, 'mail.mailroom.test');
      assert.match(sts[1]!.value, /^v=STSv1; id=[0-9a-f]{20}$/);
      assert.deepEqual(records.find((r) => r.record === 'TLS-RPT'), { record: 'TLS-RPT', name: '_smtp._tls', type: 'TXT', ttl: 'Auto', status: 'not_started', value: 'v=TLSRPTv1; rua=mailto:tls-reports@records.test' });
      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: { address: 'dmarc@records.test' } });
      assert.equal((await recordsOf(t, domain.id)).find((r) => r.record === 'TLS-RPT')!.value, 'v=TLSRPTv1; rua=mailto:dmarc@records.test');
      const { data: sender } = await t.resend.domains.create({ name: 'no-mx.test' });
      assert.equal((await recordsOf(t, sender!.id)).some((r) => r.record === 'MTA-STS' || r.record === 'TLS-RPT'), false, 'a domain that only sends has none');
    });

    it('changes the policy id with the policy: another MX host is another id', async () => {
      const other = await startApp(dialect, { worker: false, env: { MAILROOM_HOSTNAME: 'mx2.mailroom.test', MAILROOM_PUBLIC_URL: 'https://mail.mailroom.test' } });
      try {
        const idOf = async (app: TestApp) => (await recordsOf(app, (await receivingDomain(app, 'moved.test')).id)).find((r) => r.name === '_mta-sts')!.value;
        assert.notEqual(await idOf(t), await idOf(other));
        assert.match((await policyAs(other, 'mta-sts.moved.test')).body, /\r\nmx: mx2\.mailroom\.test\r\n/);
      } finally {
        await other.close();
      }
    });
  });
}
