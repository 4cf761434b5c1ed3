import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scheduleDeliverabilityChecks } from '../../../src/domain/deliverability/daily-checks.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { createDomain, type Domain, HOSTNAME, HOUR, SENDING_IP as IP, SENDING_PTR as PTR, sendingHost } from '../../support/domain-setup.ts';
import { nothingLeftToDo } from '../../support/jobs.ts';
import { startWebhookReceiver } from '../../support/webhook-receiver.ts';

// GET and POST /domains/:id/deliverability against a real DNS server (dns2) that answers the domains'
// records, the sending address's PTR and the blocklist zones: each check passes, warns and fails, with
// its fix. The rates come from mail really sent (Resend's test addresses) and counted by the rollup.

const MISSING = '01a2007a-0000-7000-8000-000000000000';

interface Check {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  fix: string | null;
  spf_lookups?: number;
}
interface Report {
  object: string;
  domain_id: string;
  name: string;
  checked_at: string;
  status: string;
  checks: Check[];
}

const IDS = ['spf', 'dkim', 'dmarc', 'alignment', 'return_path', 'ptr', 'fcrdns', 'blocklists', 'mta_sts', 'tls_rpt', 'bulk_sender', 'bounce_rate', 'complaint_rate', 'dmarc_reports'];

async function checkNow(t: TestApp, id: string): Promise<Report> {
  const { status, body } = await requestJson(t, 'POST', `/domains/${id}/deliverability`);
  assert.equal(status, 200, JSON.stringify(body));
  assert.deepEqual(body.checks.map((c: Check) => c.id), IDS);
  return body;
}

const checkOf = (report: Report, id: string): Check => report.checks.find((c) => c.id === id)!;

/** Asserts one check's status, that its detail says `detail`, and its fix (null, exact, or matching). */
function expectCheck(report: Report, id: string, status: Check['status'], detail: RegExp, fix?: string | RegExp | null) {
  const check = checkOf(report, id);
  const what = `${id}: ${JSON.stringify(check)}`;
  assert.equal(check.status, status, what);
  assert.match(check.detail, detail, what);
  if (status === 'pass') assert.equal(check.fix, null, what);
  if (typeof fix === 'string') assert.equal(check.fix, fix, what);
  else if (fix instanceof RegExp) assert.match(check.fix ?? '', fix, what);
}

/** Replaces the TXT records at `name`. */
const setTxt = (dns: TestDnsServer, name: string, values: string[]) => dns.zone.set(name, { ...dns.zone.get(name), TXT: values });

const valueOf = (domain: Domain, record: string, type = 'TXT') => domain.records.find((r) => r.record === record && r.type === type)!.value;

for (const dialect of dialects) {
  describe(`deliverability in direct mode (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;

    /** A domain with everything in place: Mailroom's records, a DMARC policy with reports, MTA-STS and TLS-RPT. */
    async function readyDomain(name: string): Promise<Domain> {
      const domain = await createDomain(t, name);
      publishRecords(dns, domain, ['SPF', 'DKIM']);
      dns.add(`_dmarc.${name}`, { TXT: [`v=DMARC1; p=reject; rua=mailto:dmarc@${name}`] });
      dns.add(`_mta-sts.${name}`, { TXT: ['v=STSv1; id=20260101'] });
      dns.add(`_smtp._tls.${name}`, { TXT: [`v=TLSRPTv1; rua=mailto:tls@${name}`] });
      return domain;
    }

    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, {
        env: {
          ...sendingHost(dns, 'zen.spamhaus.org,bl.mailroom.test'),
          MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
        },
      });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('passes every DNS check of a domain with all in place; GET answers the check kept', async () => {
      const domain = await readyDomain('good.test');
      const report = await checkNow(t, domain.id);
      assert.equal(report.object, 'deliverability');
      assert.equal(report.domain_id, domain.id);
      assert.equal(report.name, 'good.test');
      expectCheck(report, 'spf', 'pass', /send\.good\.test authorizes what sends/);
      assert.equal(checkOf(report, 'spf').spf_lookups, 1);
      expectCheck(report, 'dkim', 'pass', /mailroom\._domainkey\.good\.test holds the domain's key/);
      expectCheck(report, 'dmarc', 'pass', /`p=reject` and sends its reports to mailto:dmarc@good\.test/);
      expectCheck(report, 'alignment', 'pass', /DKIM \(d=good\.test\) and the return path send\.good\.test both align/);
      expectCheck(report, 'return_path', 'pass', /The MX of send\.good\.test names mail\.mailroom\.test/);
      expectCheck(report, 'ptr', 'pass', /203\.0\.113\.10 → mail\.mailroom\.test/);
      expectCheck(report, 'fcrdns', 'pass', /203\.0\.113\.10 → mail\.mailroom\.test → 203\.0\.113\.10/);
      expectCheck(report, 'blocklists', 'pass', /203\.0\.113\.10 is on none of zen\.spamhaus\.org, bl\.mailroom\.test/);
      expectCheck(report, 'mta_sts', 'pass', /id=20260101/);
      expectCheck(report, 'tls_rpt', 'pass', /mailto:tls@good\.test/);
      expectCheck(report, 'bounce_rate', 'pass', /Nothing was sent from good\.test in the last 7 days/);
      expectCheck(report, 'complaint_rate', 'pass', /Nothing was delivered/);
      // MAILROOM_PUBLIC_URL is http here: one-click unsubscribe would not be honoured.
      expectCheck(report, 'bulk_sender', 'warn', /over http/, 'Serve Mailroom over https and set MAILROOM_PUBLIC_URL to that address.');
      assert.equal(report.status, 'warn');

      const kept = await requestJson(t, 'GET', `/domains/${domain.id}/deliverability`);
      assert.equal(kept.status, 200);
      assert.deepEqual(kept.body, report);
    });

    it('fails each record of a domain with nothing published, naming the record to publish as GET /domains/:id lists it', async () => {
      const domain = await createDomain(t, 'bare.test');
      // Never checked: GET checks it now.
      const { status, body: report } = await requestJson(t, 'GET', `/domains/${domain.id}/deliverability`);
      assert.equal(status, 200);
      assert.equal(report.status, 'fail');
      expectCheck(report, 'spf', 'fail', /send\.bare\.test has no SPF record/, `Publish \`send.bare.test\` TXT \`${valueOf(domain, 'SPF')}\`.`);
      expectCheck(report, 'dkim', 'fail', /has no DKIM key/, `Publish \`mailroom._domainkey.bare.test\` TXT \`${valueOf(domain, 'DKIM')}\`.`);
      expectCheck(report, 'dmarc', 'fail', /bare\.test has no DMARC record/, /^Publish `_dmarc\.bare\.test` TXT `v=DMARC1; p=none; rua=mailto:dmarc@bare\.test`/);
      expectCheck(report, 'alignment', 'fail', /Neither DKIM nor SPF passes aligned with From bare\.test/, 'Fix the dkim check. Fix the spf check.');
      expectCheck(report, 'return_path', 'fail', /send\.bare\.test has no MX record/, `Publish \`send.bare.test\` MX \`10 ${valueOf(domain, 'SPF', 'MX')}\`.`);
      expectCheck(report, 'mta_sts', 'warn', /bare\.test has no MTA-STS record/, /https:\/\/mta-sts\.bare\.test\/\.well-known\/mta-sts\.txt, then `_mta-sts\.bare\.test` TXT `v=STSv1; id=\d{8}`/);
      expectCheck(report, 'tls_rpt', 'warn', /bare\.test has no TLS-RPT record/, /^Publish `_smtp\._tls\.bare\.test` TXT `v=TLSRPTv1; rua=mailto:tls-reports@bare\.test`/);
      expectCheck(report, 'bulk_sender', 'fail', /Not in place: spf, dkim, dmarc\./, /^Fix the spf, dkim, dmarc checks\./);
    });

    it('spf: warns on `?all` and on `ptr`; fails an address not authorized, `+all`, several records and more than 10 lookups', async () => {
      const warn = await readyDomain('spf-neutral.test');
      setTxt(dns, 'send.spf-neutral.test', [`v=spf1 a:${HOSTNAME} ptr ?all`]);
      let report = await checkNow(t, warn.id);
      expectCheck(report, 'spf', 'warn', /ends in `\?all` \(neutral\).*uses `ptr`/, /End it with `~all`: `send\.spf-neutral\.test` TXT `v=spf1 a:mail\.mailroom\.test ptr ~all`\. Replace `ptr`/);

      const other = await readyDomain('spf-other.test');
      setTxt(dns, 'send.spf-other.test', ['v=spf1 ip4:198.51.100.1 -all']);
      report = await checkNow(t, other.id);
      expectCheck(report, 'spf', 'fail', /does not authorize 203\.0\.113\.10 \(fail\)/, `Add \`a:${HOSTNAME}\`: \`send.spf-other.test\` TXT \`v=spf1 ip4:198.51.100.1 a:${HOSTNAME} -all\`.`);
      // SPF does not pass: DMARC rests on DKIM alone.
      expectCheck(report, 'alignment', 'warn', /SPF does not pass for it/, 'Fix the spf check.');

      const open = await readyDomain('spf-open.test');
      setTxt(dns, 'send.spf-open.test', ['v=spf1 +all']);
      report = await checkNow(t, open.id);
      expectCheck(report, 'spf', 'fail', /ends in `\+all`, which authorizes every host/, `Replace it with \`send.spf-open.test\` TXT \`v=spf1 a:${HOSTNAME} ~all\`.`);

      const twice = await readyDomain('spf-twice.test');
      setTxt(dns, 'send.spf-twice.test', [`v=spf1 a:${HOSTNAME} ~all`, 'v=spf1 include:_spf.other.test -all']);
      report = await checkNow(t, twice.id);
      expectCheck(report, 'spf', 'fail', /has 2 SPF records/, `Merge them into one: \`send.spf-twice.test\` TXT \`v=spf1 a:${HOSTNAME} include:_spf.other.test ~all\`.`);

      const many = await readyDomain('spf-many.test');
      const includes = Array.from({ length: 11 }, (_, i) => `inc${i}.spf.test`);
      for (const [i, name] of includes.entries()) dns.add(name, { TXT: [`v=spf1 ip4:198.51.100.${i} -all`] });
      setTxt(dns, 'send.spf-many.test', [`v=spf1 a:${HOSTNAME} ${includes.map((name) => `include:${name}`).join(' ')} -all`]);
      report = await checkNow(t, many.id);
      expectCheck(report, 'spf', 'fail', /needs 12 DNS lookups; receivers stop at 10/, /^Remove the include: mechanisms you no longer use/);
      assert.equal(checkOf(report, 'spf').spf_lookups, 12);
    });

    it('dkim: warns on a key in test mode; fails another key and a revoked one', async () => {
      const testing = await readyDomain('dkim-testing.test');
      const key = valueOf(testing, 'DKIM');
      setTxt(dns, 'mailroom._domainkey.dkim-testing.test', [`v=DKIM1; t=y; ${key}`]);
      let report = await checkNow(t, testing.id);
      expectCheck(report, 'dkim', 'warn', /has `t=y` \(testing\)/, `Remove \`t=y\`: \`mailroom._domainkey.dkim-testing.test\` TXT \`${key}\`.`);

      const other = await readyDomain('dkim-other.test');
      setTxt(dns, 'mailroom._domainkey.dkim-other.test', [key]);
      report = await checkNow(t, other.id);
      expectCheck(report, 'dkim', 'fail', /is not the domain's: signatures do not verify/, `Replace it with \`mailroom._domainkey.dkim-other.test\` TXT \`${valueOf(other, 'DKIM')}\`.`);
      // DKIM does not verify: DMARC rests on SPF alone.
      expectCheck(report, 'alignment', 'warn', /does not verify \(see dkim\)/, 'Fix the dkim check.');

      const revoked = await readyDomain('dkim-revoked.test');
      setTxt(dns, 'mailroom._domainkey.dkim-revoked.test', ['v=DKIM1; p=']);
      report = await checkNow(t, revoked.id);
      expectCheck(report, 'dkim', 'fail', /is revoked \(an empty `p=`\)/, /^Replace it with/);
    });

    it('dmarc: warns on `p=none` and on no `rua`; fails several records; alignment warns under `aspf=s`', async () => {
      const monitoring = await readyDomain('dmarc-none.test');
      setTxt(dns, '_dmarc.dmarc-none.test', [valueOf(monitoring, 'DMARC')]);
      let report = await checkNow(t, monitoring.id);
      expectCheck(
        report,
        'dmarc',
        'warn',
        /is `p=none`: mail that fails DMARC is still delivered.*has no `rua`/,
        'When its reports show your mail passing, raise the policy: `_dmarc.dmarc-none.test` TXT `v=DMARC1; p=quarantine; rua=mailto:dmarc@dmarc-none.test`. ' +
          'Add `rua=mailto:dmarc@dmarc-none.test` (an address of yours): `_dmarc.dmarc-none.test` TXT `v=DMARC1; p=none; rua=mailto:dmarc@dmarc-none.test`.',
      );

      const twice = await readyDomain('dmarc-twice.test');
      dns.add('_dmarc.dmarc-twice.test', { TXT: ['v=DMARC1; p=none'] });
      report = await checkNow(t, twice.id);
      expectCheck(report, 'dmarc', 'fail', /has 2 DMARC records: receivers apply none/, 'Keep one: `_dmarc.dmarc-twice.test` TXT `v=DMARC1; p=reject; rua=mailto:dmarc@dmarc-twice.test`.');

      const strict = await readyDomain('aspf.test');
      setTxt(dns, '_dmarc.aspf.test', ['v=DMARC1; p=reject; aspf=s; rua=mailto:dmarc@aspf.test']);
      report = await checkNow(t, strict.id);
      expectCheck(report, 'dmarc', 'pass', /`p=reject`/);
      expectCheck(report, 'alignment', 'warn', /send\.aspf\.test does not align with From aspf\.test under `aspf=s`/, /^Remove `aspf=s` from the DMARC record/);
    });

    it('return_path: warns on an MX that also names another host; fails one that names another only', async () => {
      const shared = await readyDomain('mx-shared.test');
      dns.add('send.mx-shared.test', { MX: [{ exchange: 'mx.elsewhere.test', priority: 20 }] });
      let report = await checkNow(t, shared.id);
      expectCheck(report, 'return_path', 'warn', /also names mx\.elsewhere\.test/, 'Remove the MX records of send.mx-shared.test that name mx.elsewhere.test.');

      const other = await readyDomain('mx-other.test');
      dns.zone.set('send.mx-other.test', { ...dns.zone.get('send.mx-other.test'), MX: [{ exchange: 'mx.elsewhere.test', priority: 10 }] });
      report = await checkNow(t, other.id);
      expectCheck(report, 'return_path', 'fail', /names mx\.elsewhere\.test, not mail\.mailroom\.test/, 'Replace it with `send.mx-other.test` MX `10 mail.mailroom.test`.');
    });

    it('ptr and fcrdns: warn on a PTR naming another host and a HELO name that does not resolve; fail without a PTR, or one that does not resolve back', async () => {
      const domain = await readyDomain('reverse.test');
      try {
        dns.zone.set(PTR, { PTR: ['host-10.provider.test'] });
        dns.add('host-10.provider.test', { A: [IP] });
        let report = await checkNow(t, domain.id);
        expectCheck(report, 'ptr', 'warn', /The PTR of 203\.0\.113\.10 names host-10\.provider\.test, not mail\.mailroom\.test/, /Have `10\.113\.0\.203\.in-addr\.arpa` PTR `mail\.mailroom\.test` published, or set MAILROOM_HOSTNAME to host-10\.provider\.test/);
        expectCheck(report, 'fcrdns', 'pass', /203\.0\.113\.10 → host-10\.provider\.test → 203\.0\.113\.10/);

        dns.zone.set('host-10.provider.test', { A: ['198.51.100.7'] });
        report = await checkNow(t, domain.id);
        expectCheck(report, 'fcrdns', 'fail', /names host-10\.provider\.test, which does not resolve back to 203\.0\.113\.10/, 'Publish `host-10.provider.test` A `203.0.113.10`.');

        dns.zone.delete(PTR);
        report = await checkNow(t, domain.id);
        expectCheck(report, 'ptr', 'fail', /203\.0\.113\.10 has no PTR record/, /to publish `10\.113\.0\.203\.in-addr\.arpa` PTR `mail\.mailroom\.test`\.$/);
        expectCheck(report, 'fcrdns', 'fail', /has no PTR record, so no name confirms it/, 'Fix the ptr check.');

        // The address's name resolves back, but the HELO name (MAILROOM_HOSTNAME) resolves elsewhere.
        dns.zone.set(PTR, { PTR: ['host-10.provider.test'] });
        dns.zone.set('host-10.provider.test', { A: [IP] });
        dns.zone.set(HOSTNAME, { A: ['198.51.100.9'] });
        report = await checkNow(t, domain.id);
        expectCheck(report, 'fcrdns', 'warn', /203\.0\.113\.10 → host-10\.provider\.test → 203\.0\.113\.10, but MAILROOM_HOSTNAME \(mail\.mailroom\.test\), the HELO name, does not resolve to 203\.0\.113\.10/, 'Publish `mail.mailroom.test` A `203.0.113.10`.');
        // `a:mail.mailroom.test` no longer covers the sending address: SPF needs it by number.
        expectCheck(report, 'spf', 'fail', /does not authorize 203\.0\.113\.10 \(softfail\)/, `Add \`ip4:${IP}\`: \`send.reverse.test\` TXT \`v=spf1 a:${HOSTNAME} ip4:${IP} ~all\`.`);
        // With no record, the fix is the one GET /domains/:id lists, with the address it misses.
        setTxt(dns, 'send.reverse.test', []);
        report = await checkNow(t, domain.id);
        expectCheck(report, 'spf', 'fail', /send\.reverse\.test has no SPF record/, `Publish \`send.reverse.test\` TXT \`v=spf1 a:${HOSTNAME} ip4:${IP} ~all\`.`);
      } finally {
        dns.zone.set(PTR, { PTR: [HOSTNAME] });
        dns.zone.set(HOSTNAME, { A: [IP] });
      }
    });

    it('blocklists: fail on a listing with its code explained; warn on a zone that refuses to answer', async () => {
      const domain = await readyDomain('listed.test');
      const zen = `10.113.0.203.zen.spamhaus.org`;
      try {
        dns.add(zen, { A: ['127.0.0.4'], TXT: ['https://check.spamhaus.org/query/ip/203.0.113.10'] });
        dns.add('10.113.0.203.bl.mailroom.test', { A: ['127.0.0.2'] });
        let report = await checkNow(t, domain.id);
        expectCheck(
          report,
          'blocklists',
          'fail',
          /203\.0\.113\.10 is listed on zen\.spamhaus\.org \(127\.0\.0\.4: XBL: a host that is infected or exploited\)\. It says: "https:\/\/check\.spamhaus\.org\/query\/ip\/203\.0\.113\.10"\. 203\.0\.113\.10 is listed on bl\.mailroom\.test \(127\.0\.0\.2: listed\)/,
          /^Look 203\.0\.113\.10 up at https:\/\/check\.spamhaus\.org\/, remove the cause it names, then ask for its removal there\. Look 203\.0\.113\.10 up at bl\.mailroom\.test's site/,
        );

        dns.zone.delete('10.113.0.203.bl.mailroom.test');
        dns.zone.set(zen, { A: ['127.255.255.254'] });
        report = await checkNow(t, domain.id);
        expectCheck(report, 'blocklists', 'warn', /zen\.spamhaus\.org did not answer for 203\.0\.113\.10 \(127\.255\.255\.254: refused: it answers no public or open resolver\)/, /through a resolver of your own \(DNS_SERVERS\)/);
      } finally {
        dns.zone.delete(zen);
        dns.zone.delete('10.113.0.203.bl.mailroom.test');
      }
    });

    it('mta_sts and tls_rpt: fail a record without its id or its rua', async () => {
      const domain = await readyDomain('policies.test');
      setTxt(dns, '_mta-sts.policies.test', ['v=STSv1;']);
      setTxt(dns, '_smtp._tls.policies.test', ['v=TLSRPTv1; rua=tls@policies.test']);
      const report = await checkNow(t, domain.id);
      expectCheck(report, 'mta_sts', 'fail', /has no valid `id`/, /^Replace it with `_mta-sts\.policies\.test` TXT `v=STSv1; id=\d{8}`\.$/);
      expectCheck(report, 'tls_rpt', 'fail', /has no valid `rua`/, 'Replace it with `_smtp._tls.policies.test` TXT `v=TLSRPTv1; rua=mailto:tls-reports@policies.test`.');
    });

    it('warns that a check could not be made when a lookup fails (SERVFAIL)', async () => {
      const domain = await readyDomain('servfail.test');
      dns.failing.add('_dmarc.servfail.test');
      const report = await checkNow(t, domain.id);
      expectCheck(report, 'dmarc', 'warn', /The DNS lookup of _dmarc\.servfail\.test failed \(ESERVFAIL\), so this was not checked/, /runs again daily/);
    });

    it("bounce_rate, complaint_rate and bulk_sender: from the domain's mail of the last 7 days", async () => {
      const send = async (from: string, to: string[]) => {
        const emails = [];
        for (let i = 0; i < to.length; i += 50) emails.push({ from, to: to.slice(i, i + 50), subject: 'Hello', html: '<p>Hello</p>' });
        for (let i = 0; i < emails.length; i += 100) assert.equal((await t.resend.batch.send(emails.slice(i, i + 100))).error, null);
      };
      const some = (kind: string, n: number) => Array.from({ length: n }, (_, i) => `${kind}+${i}@resend.dev`);
      const [fine, warn, fail] = [await readyDomain('rates-fine.test'), await readyDomain('rates-warn.test'), await readyDomain('rates-fail.test')];
      await send('a@rates-fine.test', some('delivered', 100));
      await send('a@rates-warn.test', [...some('delivered', 399), 'complained@resend.dev', ...some('bounced', 12)]);
      await send('a@rates-fail.test', [...some('delivered', 249), 'complained@resend.dev', ...some('bounced', 20)]);
      await nothingLeftToDo(t);

      let report = await checkNow(t, fine.id);
      expectCheck(report, 'bounce_rate', 'pass', /0 of 100 messages sent from rates-fine\.test in the last 7 days bounced: 0\.00%/);
      expectCheck(report, 'complaint_rate', 'pass', /0 of 100 messages delivered .* were marked as spam: 0\.00%/);

      report = await checkNow(t, warn.id);
      expectCheck(report, 'bounce_rate', 'warn', /12 of 412 messages sent .* bounced: 2\.91%, above 2\.00%/, /^Send only to addresses that asked for your mail/);
      expectCheck(report, 'complaint_rate', 'warn', /1 of 400 messages delivered .* marked as spam: 0\.25%, above 0\.10%/, /^Send only what recipients asked for/);
      expectCheck(report, 'bulk_sender', 'warn', /Complaints over the last 7 days: 0\.25%, above 0\.10%/);

      report = await checkNow(t, fail.id);
      expectCheck(report, 'bounce_rate', 'fail', /20 of 270 messages sent .* bounced: 7\.41%, above 4\.00%/);
      expectCheck(report, 'complaint_rate', 'fail', /1 of 250 messages delivered .* 0\.40%, above 0\.30%/);
      expectCheck(report, 'bulk_sender', 'fail', /Complaints over the last 7 days: 0\.40%, above 0\.30%/, /Bring complaints under 0\.1%/);
    });

    it('bulk_sender: fails once broadcasts went out with one-click unsubscribe over http', async () => {
      const domain = await readyDomain('news.test');
      const segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      await t.resend.contacts.create({ email: 'delivered@resend.dev', segments: [{ id: segment }] });
      const broadcast = (await t.resend.broadcasts.create({ from: 'News <news@news.test>', segmentId: segment, subject: 'News', html: '<p>News</p>', send: true })).data!.id;
      await eventually(async () => (await t.resend.broadcasts.get(broadcast)).data!.status === 'sent');
      await nothingLeftToDo(t);
      const report = await checkNow(t, domain.id);
      expectCheck(report, 'bulk_sender', 'fail', /1 broadcast message in the last 7 days had one-click unsubscribe links over http \(MAILROOM_PUBLIC_URL is http:/, 'Serve Mailroom over https and set MAILROOM_PUBLIC_URL to that address.');
    });

    it('emits domain.updated when the overall status changes, not when it stays', async () => {
      const domain = await readyDomain('changes.test');
      // An application's endpoint, subscribed: the event log keeps an event only for one.
      const receiver = await startWebhookReceiver();
      after(() => receiver.close());
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['domain.updated'] });
      const events = async () => {
        await nothingLeftToDo(t);
        const hooks = [...receiver.received].sort((a, b) => a.payload.created_at.localeCompare(b.payload.created_at));
        return hooks.map((hook) => hook.payload.data).filter((data) => data.id === domain.id);
      };
      assert.equal((await checkNow(t, domain.id)).status, 'warn');
      assert.deepEqual(await events(), [], 'the first check changes nothing');

      const key = dns.zone.get('mailroom._domainkey.changes.test')!;
      dns.zone.delete('mailroom._domainkey.changes.test');
      const failed = await checkNow(t, domain.id);
      assert.equal(failed.status, 'fail');
      await checkNow(t, domain.id);
      dns.zone.set('mailroom._domainkey.changes.test', key);
      const back = await checkNow(t, domain.id);
      assert.equal(back.status, 'warn');

      const logged = await events();
      assert.deepEqual(logged.map((data) => data.deliverability), [
        { status: 'fail', previous_status: 'warn', checked_at: failed.checked_at.replace(' ', 'T').replace('+00', 'Z') },
        { status: 'warn', previous_status: 'fail', checked_at: back.checked_at.replace(' ', 'T').replace('+00', 'Z') },
      ]);
      // The domain as domain.updated always carries it.
      assert.equal(logged[0]!.name, 'changes.test');
      assert.ok(Array.isArray(logged[0]!.records));
    });

    it('answers 404 in Resend’s shape for an unknown domain', async () => {
      for (const method of ['GET', 'POST']) {
        const { status, body } = await requestJson(t, method, `/domains/${MISSING}/deliverability`);
        assert.equal(status, 404);
        assert.deepEqual(body, { statusCode: 404, name: 'not_found', message: 'Domain not found' });
      }
    });

    it('checks every domain daily: a domain never checked at once, then each a day after its last check', async () => {
      const domain = await readyDomain('daily.test');
      const row = () => t.ctx.db.selectFrom('domain_deliverability').selectAll().where('domain_id', '=', domain.id).executeTakeFirst();
      const job = () => t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', 'check-deliverability').executeTakeFirst();
      await scheduleDeliverabilityChecks(t.ctx);
      const first = await eventually(row);
      assert.equal(first.status, 'warn');
      // Every domain has a check now; the next run is an hour away.
      const unchecked = await t.ctx.db.selectFrom('domains').leftJoin('domain_deliverability', 'domain_deliverability.domain_id', 'domains.id').select('domains.id').where('domain_deliverability.checked_at', 'is', null).execute();
      assert.deepEqual(unchecked, []);
      const next = await eventually(async () => {
        const waiting = await job();
        return waiting?.locked_by === null && waiting;
      });
      assert.ok(next.run_at > t.clock.now());

      dns.zone.delete('mailroom._domainkey.daily.test');
      t.advance(HOUR + 1000);
      await eventually(async () => {
        const waiting = await job();
        return waiting?.locked_by === null && waiting.run_at > t.clock.now();
      });
      assert.deepEqual(await row(), first, 'checked less than a day ago: not again');

      t.advance(24 * HOUR);
      const second = await eventually(async () => {
        const now = await row();
        return now!.checked_at !== first.checked_at && now;
      });
      assert.equal(second.status, 'fail');
      assert.match(JSON.parse(second.checks).find((c: Check) => c.id === 'dkim').detail, /has no DKIM key/);
    });
  });

  describe(`deliverability through a relay (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, {
        worker: false,
        env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, SMTP_URL: 'smtp://smtp.sendgrid.net:587', MAILROOM_PUBLIC_URL: 'https://mail.example.com' },
      });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it("checks the From domain's SPF for the relay's include; bounces and reverse DNS are the relay's", async () => {
      const domain = await createDomain(t, 'relayed.test');
      publishRecords(dns, domain, ['DKIM']);
      dns.add('relayed.test', { TXT: ['v=spf1 include:_spf.google.com ~all'] });
      dns.add('_spf.google.com', { TXT: ['v=spf1 ip4:198.51.100.0/24 ~all'] });
      dns.add('_dmarc.relayed.test', { TXT: ['v=DMARC1; p=quarantine; rua=mailto:dmarc@relayed.test'] });
      let report = await checkNow(t, domain.id);
      expectCheck(report, 'spf', 'fail', /The SPF record at relayed\.test does not include sendgrid\.net, which smtp\.sendgrid\.net sends from/, 'Add `include:sendgrid.net`: `relayed.test` TXT `v=spf1 include:_spf.google.com include:sendgrid.net ~all`.');
      expectCheck(report, 'alignment', 'warn', /The return path relayed\.test aligns with From, but SPF does not pass for it/);

      dns.zone.set('relayed.test', { TXT: ['v=spf1 include:_spf.google.com include:sendgrid.net ~all'] });
      dns.add('sendgrid.net', { TXT: ['v=spf1 ip4:198.51.100.0/24 ~all'] });
      report = await checkNow(t, domain.id);
      expectCheck(report, 'spf', 'pass', /The SPF record at relayed\.test authorizes what sends/);
      assert.equal(checkOf(report, 'spf').spf_lookups, 2);
      expectCheck(report, 'alignment', 'pass', /the return path relayed\.test both align/);
      expectCheck(report, 'return_path', 'pass', /Through the relay the envelope sender is at relayed\.test/);
      expectCheck(report, 'ptr', 'pass', /Relay mode: mail leaves from smtp\.sendgrid\.net's addresses/);
      expectCheck(report, 'fcrdns', 'pass', /Relay mode/);
      expectCheck(report, 'blocklists', 'pass', /set MAILROOM_SENDING_IPS to have them looked up/);
      // https: one-click unsubscribe is honoured, and SPF, DKIM and DMARC are in place.
      expectCheck(report, 'bulk_sender', 'pass', /SPF, DKIM and DMARC are in place and every broadcast carries one-click unsubscribe over https/);
    });
  });

  describe(`deliverability of the addresses of MAILROOM_HOSTNAME (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { worker: false, env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: 'helo.mailroom.test', DELIVERY_MODE: 'direct', MAILROOM_DNSBL_ZONES: 'bl.mailroom.test' } });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('without MAILROOM_SENDING_IPS, checks the addresses MAILROOM_HOSTNAME has, and fails when it has none', async () => {
      const domain = await createDomain(t, 'hostless.test');
      let report = await checkNow(t, domain.id);
      const none = /MAILROOM_HOSTNAME \(helo\.mailroom\.test\) has no A or AAAA record and MAILROOM_SENDING_IPS is not set/;
      const fix = 'Publish `helo.mailroom.test` A `<this server’s public address>`, or set MAILROOM_SENDING_IPS.';
      expectCheck(report, 'ptr', 'fail', none, fix);
      expectCheck(report, 'fcrdns', 'fail', none, fix);
      expectCheck(report, 'blocklists', 'warn', /No sending address is known \(see ptr\)/, 'Fix the ptr check.');

      dns.add('helo.mailroom.test', { A: ['198.51.100.20'] });
      dns.add('20.100.51.198.in-addr.arpa', { PTR: ['helo.mailroom.test'] });
      report = await checkNow(t, domain.id);
      expectCheck(report, 'ptr', 'pass', /198\.51\.100\.20 → helo\.mailroom\.test\./);
      expectCheck(report, 'fcrdns', 'pass', /198\.51\.100\.20 → helo\.mailroom\.test → 198\.51\.100\.20/);
      expectCheck(report, 'blocklists', 'pass', /198\.51\.100\.20 is on none of bl\.mailroom\.test/);
    });
  });
}
