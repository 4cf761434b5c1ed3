import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../src/config.ts';
import { httpsRequest } from '../../src/delivery/https-request.ts';
import { mxMatches, parseStsPolicy, stsRecordId } from '../../src/delivery/mta-sts-policy.ts';
import { reportAddresses } from '../../src/domain/tls-reports/report-address.ts';
import { startDnsServer } from '../support/dns-server.ts';

// What MTA-STS and TLS reporting read from a recipient domain's DNS and web server, which anyone writes:
// each rule of RFC 8461 and 8460, and hostile input refused in linear time.

describe('MTA-STS records and policies (RFC 8461)', () => {
  it('takes the id of exactly one v=STSv1 record', () => {
    assert.equal(stsRecordId(['v=STSv1; id=20160831085700Z;']), '20160831085700Z');
    assert.equal(stsRecordId(['v=spf1 -all', 'v=STSv1;id=abc']), 'abc');
    assert.equal(stsRecordId(['v=STSv1; id=1', 'v=STSv1; id=2']), undefined, 'two records: no policy');
    assert.equal(stsRecordId(['v=STSv1; id=not-alnum']), undefined);
    assert.equal(stsRecordId(['v=STSv1']), undefined);
    assert.equal(stsRecordId(['v=STSv10; id=1']), undefined);
  });

  it('reads a policy, CRLF or LF, and refuses an invalid one with the reason', () => {
    const policy = parseStsPolicy('1', 'version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmax_age: 604800\r\n');
    assert.deepEqual(policy, { id: '1', mode: 'enforce', mx: ['mail.example.com', '*.example.net'], maxAge: 604800, text: ['version: STSv1', 'mode: enforce', 'mx: mail.example.com', 'mx: *.example.net', 'max_age: 604800'] });
    assert.deepEqual(parseStsPolicy('1', 'version: STSv1\nmode: none\nmax_age: 86400\n'), { id: '1', mode: 'none', mx: [], maxAge: 86400, text: ['version: STSv1', 'mode: none', 'max_age: 86400'] });
    const invalid = (body: string) => (parseStsPolicy('1', body) as { invalid: string }).invalid;
    assert.match(invalid('version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 1'), /version/);
    assert.match(invalid('version: STSv1\nmode: strict\nmx: a.example\nmax_age: 1'), /mode/);
    assert.match(invalid('version: STSv1\nmode: enforce\nmax_age: 1'), /no mx/);
    assert.match(invalid('version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 31557601'), /max_age/);
    assert.match(invalid('version: STSv1\nmode: enforce\nmx: a.example\nmax_age: -1'), /max_age/);
    assert.match(invalid('version: STSv1\nmode: enforce\nmx: *.*.example\nmax_age: 1'), /mx line/);
    assert.match(invalid('<html>not a policy</html>'), /key: value/);
  });

  it('matches MX hosts exactly, or one label left of a *. pattern, without case or trailing dot', () => {
    const patterns = ['mail.example.com', '*.example.net'];
    assert.equal(mxMatches(patterns, 'MAIL.example.com.'), true);
    assert.equal(mxMatches(patterns, 'mx1.example.net'), true);
    assert.equal(mxMatches(patterns, 'example.net'), false);
    assert.equal(mxMatches(patterns, 'a.b.example.net'), false);
    assert.equal(mxMatches(patterns, 'other.example.com'), false);
  });

  it('refuses a hostile policy: a 60 KB mx line, a line of bare colons', () => {
    const invalid = (body: string) => (parseStsPolicy('1', body) as { invalid: string }).invalid;
    assert.match(invalid(`version: STSv1\nmode: enforce\nmx: ${'a'.repeat(60_000)}\nmax_age: 1`), /mx line/);
    assert.match(invalid(`version: STSv1\nmode: enforce\n${':'.repeat(3000)}\nmax_age: 1`), /key: value/);
  });
});

describe('TLS report addresses (RFC 8460 3)', () => {
  it('takes the mailto: and https: rua of exactly one v=TLSRPTv1 record', () => {
    assert.deepEqual(reportAddresses(['v=TLSRPTv1; rua=mailto:tlsrpt@example.com,https://reports.example.com/v1']), { mailto: ['tlsrpt@example.com'], https: ['https://reports.example.com/v1'] });
    assert.deepEqual(reportAddresses(['v=TLSRPTv1;rua=http://plain.example/,ftp://x,mailto:bad']), { mailto: [], https: [] });
    assert.deepEqual(reportAddresses(['v=TLSRPTv1; rua=mailto:a@example.com', 'v=TLSRPTv1; rua=mailto:b@example.com']), { mailto: [], https: [] });
    assert.deepEqual(reportAddresses(['v=TLSRPTv1; rua=mailto:%E0%A4%A@example.com']), { mailto: [], https: [] });
    assert.deepEqual(reportAddresses(['v=spf1 -all']), { mailto: [], https: [] });
  });
});

describe('MTA-STS and TLS report settings', () => {
  it('reads them, and refuses a bad value by name', () => {
    const config = readConfig({ MAILROOM_TLSRPT: 'off', MAILROOM_MTA_STS_PORT: '8443', MAILROOM_TLSRPT_FROM: 'tls@example.com' });
    assert.deepEqual([config.tlsRpt.enabled, config.mtaSts.port, config.tlsRpt.from, config.mtaSts.allowPrivate], [false, 8443, 'tls@example.com', false]);
    assert.equal(readConfig({}).tlsRpt.enabled, true);
    assert.throws(() => readConfig({ MAILROOM_TLSRPT: 'maybe' }), (e: unknown) => e instanceof ConfigError && /MAILROOM_TLSRPT: expected on or off/.test(e.message));
    assert.throws(() => readConfig({ MAILROOM_TLSRPT_FROM: 'not an address' }), /MAILROOM_TLSRPT_FROM/);
    assert.throws(() => readConfig({ MAILROOM_OUTBOUND_CA: '/nonexistent/ca.pem' }), /MAILROOM_OUTBOUND_CA: the file \/nonexistent\/ca\.pem does not exist/);
  });
});

describe('the HTTPS requests of MTA-STS and TLS reports', () => {
  it('refuse a private address, as a literal or as a name resolves, unless allowed', async () => {
    const dns = await startDnsServer();
    dns.add('mta-sts.inside.test', { A: ['10.0.0.7'] });
    const options = { method: 'GET' as const, ca: undefined, resolver: dns.resolver, allowPrivate: false, timeoutMs: 5000, maxBytes: 1024 };
    try {
      await assert.rejects(httpsRequest(new URL('https://127.0.0.1:9/report'), options), /127\.0\.0\.1 is a private address/);
      await assert.rejects(httpsRequest(new URL('https://mta-sts.inside.test/.well-known/mta-sts.txt'), options), /mta-sts\.inside\.test resolves to a private address/);
    } finally {
      await dns.close();
    }
  });
});
