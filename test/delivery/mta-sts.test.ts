import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import { authenticate } from 'mailauth';
import { scheduleTlsReports } from '../../src/domain/tls-reports/send-reports.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { HOSTNAME, verifiedDomain } from '../support/domain-setup.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { publishRecipients, stsPolicy } from '../support/mta-sts.ts';
import { createTestCa, type TestCa } from '../support/test-ca.ts';
import { TLSRPT_SCHEMA } from '../support/tlsrpt-schema.ts';

// MTA-STS and TLS reports end to end: a DNS server answering the `_mta-sts` and `_smtp._tls` records, an
// HTTPS server (its certificate from a test CA the app trusts) serving the policies and taking reports,
// and recipients' MX hosts with STARTTLS: one whose certificate names it, one whose does not, one
// without STARTTLS. Every MX host listens on DIRECT_SMTP_PORT on its own 127.0.0.x.

type Event = { type: string; recipient: string | null; response: string | null };

const events = async (t: TestApp, id: string): Promise<Event[]> => ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: Event[] }).data;
const lastEvent = (t: TestApp, id: string, event: string) => eventually(async () => (await t.resend.emails.get(id)).data?.last_event === event || undefined);
const schema = new Ajv({ allErrors: true }).compile(TLSRPT_SCHEMA);
const schemaErrors = (report: unknown): string | undefined => (schema(report) ? undefined : JSON.stringify(schema.errors));

for (const dialect of dialects) {
  describe(`MTA-STS and TLS reports in direct delivery (${dialect})`, () => {
    let dns: TestDnsServer;
    let ca: TestCa;
    let plainMx: TestSmtpServer; // 127.0.0.1, no STARTTLS
    let goodMx: TestSmtpServer; // 127.0.0.4, a certificate for mx.good.test
    let wrongMx: TestSmtpServer; // 127.0.0.5, a certificate for another name
    let https: Server;
    let t: TestApp;
    const policies = new Map<string, string>();
    const fetched: string[] = [];
    const posted: { type: string | undefined; body: Buffer }[] = [];
    const base = { from: 'Acme <hello@sender.test>', subject: 'Hello', html: '<p>Hello</p>' };

    before(async () => {
      dns = await startDnsServer();
      ca = await createTestCa();
      plainMx = await startSmtpServer();
      goodMx = await startSmtpServer({ disabledCommands: [], ...(await ca.issue(['mx.good.test'])) }, { host: '127.0.0.4', port: plainMx.port });
      wrongMx = await startSmtpServer({ disabledCommands: [], ...(await ca.issue(['wrong.example'])) }, { host: '127.0.0.5', port: plainMx.port });
      const names = ['good', 'bad', 'testing', 'nomatch', 'plain', 'broken', 'rotate'].map((name) => `mta-sts.${name}.test`);
      https = createServer(await ca.issue([...names, 'reports.good.test']), (request, response) => {
        const host = (request.headers.host ?? '').replace(/:\d+$/, '');
        if (request.method === 'POST' && request.url === '/tlsrpt') {
          const chunks: Buffer[] = [];
          request.on('data', (chunk: Buffer) => chunks.push(chunk));
          request.on('end', () => {
            posted.push({ type: request.headers['content-type'], body: Buffer.concat(chunks) });
            response.writeHead(200).end();
          });
          return;
        }
        fetched.push(host);
        const text = request.url === '/.well-known/mta-sts.txt' ? policies.get(host) : undefined;
        if (text === undefined) return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/plain' }).end(text);
      });
      await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
      const httpsPort = (https.address() as AddressInfo).port;

      dns.add(HOSTNAME, { A: ['127.0.0.1'] });
      publishRecipients(
        dns,
        [
          ['good.test', 'mx.good.test', '127.0.0.4'],
          ['bad.test', 'mx.bad.test', '127.0.0.5'],
          ['testing.test', 'mx.testing.test', '127.0.0.5'],
          ['nomatch.test', 'mx.nomatch.test', '127.0.0.4'],
          ['plain.test', 'mx.plain.test', '127.0.0.1'],
          ['broken.test', 'mx.broken.test', '127.0.0.1'],
          ['rotate.test', 'mx.good.test', '127.0.0.4'],
          ['reports.test', 'mx.reports.test', '127.0.0.1'],
        ],
        ['reports.test'],
      );
      dns.add('reports.good.test', { A: ['127.0.0.1'] });
      policies.set('mta-sts.good.test', stsPolicy('enforce', 'mx.good.test'));
      policies.set('mta-sts.bad.test', stsPolicy('enforce', '*.bad.test'));
      policies.set('mta-sts.testing.test', stsPolicy('testing', 'mx.testing.test'));
      policies.set('mta-sts.nomatch.test', stsPolicy('enforce', 'mx.elsewhere.test'));
      policies.set('mta-sts.plain.test', stsPolicy('enforce', 'mx.plain.test'));
      policies.set('mta-sts.rotate.test', stsPolicy('enforce', 'mx.good.test'));
      // broken.test publishes the record but serves no policy: 404.
      t = await startApp(dialect, {
        env: {
          DELIVERY_MODE: 'direct',
          DIRECT_SMTP_PORT: String(plainMx.port),
          DNS_SERVERS: dns.address,
          MAILROOM_HOSTNAME: HOSTNAME,
          MAILROOM_MTA_STS_PORT: String(httpsPort),
          MAILROOM_OUTBOUND_CA: ca.caFile,
          MAILROOM_ALLOW_PRIVATE_TLS_HOSTS: 'true',
          MAILROOM_TLSRPT_FROM: 'tls-reports@sender.test',
          MAILROOM_TLSRPT_ORG: 'Mailroom Test',
        },
      });
      await verifiedDomain(t, dns, 'sender.test');
      dns.add('_smtp._tls.bad.test', { TXT: [`v=TLSRPTv1; rua=https://reports.good.test:${httpsPort}/tlsrpt,mailto:tls@reports.test`] });
    });
    after(async () => {
      await t.close();
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
      await Promise.all([plainMx.close(), goodMx.close(), wrongMx.close(), dns.close()]);
      ca.close();
    });

    it('enforce: delivers over TLS to an MX host the policy names, its certificate valid for that name', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'a@good.test' });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(goodMx.messages.map((m) => [m.to[0], m.secure]), [['a@good.test', true]]);
      const kept = await t.ctx.db.selectFrom('mta_sts_policies').selectAll().where('domain', '=', 'good.test').executeTakeFirstOrThrow();
      assert.equal(kept.mode, 'enforce');
      assert.equal(kept.policy_id, '20260101');
    });

    it('enforce: defers a server whose certificate does not name it, and sends nothing in the clear', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'b@bad.test' });
      await lastEvent(t, data!.id, 'delivery_delayed');
      const [event] = await events(t, data!.id);
      assert.match(event!.response!, /MTA-STS policy of bad\.test \(mode enforce/);
      assert.match(event!.response!, /mx\.bad\.test \(127\.0\.0\.5\): certificate-host-mismatch/);
      assert.equal(wrongMx.messages.length, 0);
    });

    it('enforce: defers when no MX host is named by the policy, or the named one offers no STARTTLS', async () => {
      const { data: nomatch } = await t.resend.emails.send({ ...base, to: 'c@nomatch.test' });
      const { data: plain } = await t.resend.emails.send({ ...base, to: 'd@plain.test' });
      await lastEvent(t, nomatch!.id, 'delivery_delayed');
      await lastEvent(t, plain!.id, 'delivery_delayed');
      assert.match((await events(t, nomatch!.id))[0]!.response!, /mx\.nomatch\.test: validation-failure \(the MX host is not named by the policy\)/);
      assert.match((await events(t, plain!.id))[0]!.response!, /mx\.plain\.test \(127\.0\.0\.1\): starttls-not-supported/);
      assert.equal(goodMx.messages.filter((m) => m.to[0] === 'c@nomatch.test').length, 0);
      assert.equal(plainMx.messages.length, 0);
    });

    it('testing: delivers as without a policy, and records the failure', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'e@testing.test' });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(wrongMx.messages.map((m) => m.to[0]), ['e@testing.test']);
      await t.ctx.tlsSessions.flush();
      const counts = await t.ctx.db.selectFrom('tls_session_counts').selectAll().where('domain', '=', 'testing.test').execute();
      assert.deepEqual(counts.map((c) => [c.result, c.mx_host]), [['certificate-host-mismatch', 'mx.testing.test']]);
    });

    it('a policy that cannot be fetched: delivered as without one, reported as sts-policy-fetch-error', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'f@broken.test' });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(plainMx.messages.map((m) => m.to[0]), ['f@broken.test']);
      await t.ctx.tlsSessions.flush();
      const counts = await t.ctx.db.selectFrom('tls_session_counts').selectAll().where('domain', '=', 'broken.test').execute();
      assert.deepEqual(counts.map((c) => c.result), ['sts-policy-fetch-error']);
      assert.match(counts[0]!.reason, /mta-sts\.broken\.test.*answered 404/);
    });

    it('keeps a policy for its max_age, and fetches it again when the TXT id changes', async () => {
      const { data: first } = await t.resend.emails.send({ ...base, to: 'g@rotate.test' });
      await lastEvent(t, first!.id, 'delivered');
      t.advance(10 * 60_000); // past what a process remembers: the database's copy is read, the TXT id compared
      const { data: second } = await t.resend.emails.send({ ...base, to: 'h@rotate.test' });
      await lastEvent(t, second!.id, 'delivered');
      assert.equal(fetched.filter((host) => host === 'mta-sts.rotate.test').length, 1);

      policies.set('mta-sts.rotate.test', stsPolicy('enforce', 'mx.moved.test'));
      dns.zone.set('_mta-sts.rotate.test', { TXT: ['v=STSv1; id=20260202'] });
      t.advance(10 * 60_000);
      const { data: third } = await t.resend.emails.send({ ...base, to: 'i@rotate.test' });
      await lastEvent(t, third!.id, 'delivery_delayed');
      assert.equal(fetched.filter((host) => host === 'mta-sts.rotate.test').length, 2);
      assert.match((await events(t, third!.id))[0]!.response!, /not named by the policy/);
    });

    it("sends a day's TLS report once to the domain's https: and mailto: addresses, in RFC 8460's format", async () => {
      await t.ctx.tlsSessions.flush();
      const day = new Date(t.clock.now()).toISOString().slice(0, 10);
      t.advance(86_400_000); // the next day: today's sessions are reported
      await scheduleTlsReports(t.ctx);
      const [post] = await eventually(() => posted.length > 0 && posted);
      assert.equal(post!.type, 'application/tlsrpt+gzip');
      const report = JSON.parse(gunzipSync(post!.body).toString('utf8'));
      assert.equal(schemaErrors(report), undefined);
      assert.equal(report['organization-name'], 'Mailroom Test');
      assert.equal(report['date-range']['start-datetime'], `${day}T00:00:00Z`);
      const [entry] = report.policies;
      assert.deepEqual(entry.policy, { 'policy-type': 'sts', 'policy-string': ['version: STSv1', 'mode: enforce', 'mx: *.bad.test', 'max_age: 86400'], 'policy-domain': 'bad.test', 'mx-host': ['*.bad.test'] });
      assert.equal(entry.summary['total-successful-session-count'], 0);
      assert.ok(entry.summary['total-failure-session-count'] >= 1);
      assert.deepEqual(
        entry['failure-details'].map((f: any) => [f['result-type'], f['receiving-mx-hostname'], f['receiving-ip'], f['failure-reason-code']]),
        [['certificate-host-mismatch', 'mx.bad.test', '127.0.0.5', 'ERR_TLS_CERT_ALTNAME_INVALID']],
      );

      // By mail: a report sent as any email is, from MAILROOM_TLSRPT_FROM, signed by its domain.
      const mailed = await eventually(() => plainMx.messages.find((m) => m.to[0] === 'tls@reports.test'));
      assert.match(mailed.parsed.subject!, /^Report Domain: bad\.test Submitter: Mailroom Test Report-ID: <.+>$/);
      assert.equal(mailed.parsed.headers.get('tls-report-domain'), 'bad.test');
      const type = mailed.parsed.headers.get('content-type') as unknown as { value: string; params: Record<string, string> };
      assert.deepEqual([type.value, type.params['report-type']], ['multipart/report', 'tlsrpt']);
      const auth = await authenticate(mailed.raw, { ip: '127.0.0.1', helo: HOSTNAME, sender: mailed.from, mta: 'mx.reports.test', resolver: (name: string, type: string) => dns.resolver.resolve(name, type) as Promise<string[]> });
      assert.deepEqual([auth.dkim.results[0]!.status.result, auth.dkim.results[0]!.signingDomain], ['pass', 'sender.test']);
      const [attachment] = mailed.parsed.attachments;
      assert.equal(attachment!.contentType, 'application/tlsrpt+gzip');
      assert.match(attachment!.filename!, /^Mailroom Test!bad\.test!\d+!\d+\.json\.gz$/);
      const byMail = JSON.parse(gunzipSync(attachment!.content).toString('utf8'));
      assert.equal(schemaErrors(byMail), undefined);
      assert.equal(byMail['report-id'], report['report-id']);

      // Once: another run, and another worker's start, make no second report of that day.
      const reports = await t.ctx.db.selectFrom('tls_reports').selectAll().where('day', '=', day).execute();
      assert.deepEqual(reports.find((r) => r.domain === 'good.test')?.rua, 'none published');
      await scheduleTlsReports(t.ctx);
      t.advance(3600_000);
      await eventually(async () => (await t.ctx.db.selectFrom('jobs').select('run_at').where('key', '=', 'send-tls-reports').executeTakeFirst())!.run_at > t.clock.now());
      assert.equal(posted.length, 1);
      assert.equal(plainMx.messages.filter((m) => m.to[0] === 'tls@reports.test').length, 1);
      assert.equal((await t.ctx.db.selectFrom('tls_reports').selectAll().where('day', '=', day).where('domain', '=', 'bad.test').execute()).length, 1);
    });
  });
}
