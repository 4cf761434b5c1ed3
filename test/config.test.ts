import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, readConfig, readRole, roleName } from '../src/config.ts';
import { resolveSecret } from '../src/secrets/secret.ts';
import { startApp } from './support/harness.ts';

describe('configuration', () => {
  it('has defaults that run a local, capturing instance', () => {
    const config = readConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.databaseUrl, './data/mailroom.db');
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.apiKey, undefined);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.retentionDays, 30);
    assert.equal(readConfig({ MAILROOM_RETENTION_DAYS: '0' }).retentionDays, 0, '0 keeps forever');
    assert.deepEqual(config.apiLogs, { enabled: true, bodyBytes: 10_240 });
    assert.deepEqual(readConfig({ MAILROOM_API_LOGS: 'false', MAILROOM_LOG_BODY_BYTES: '0' }).apiLogs, { enabled: false, bodyBytes: 0 });
    assert.ok(Object.isFrozen(config));
  });

  it('derives the public URL from PORT and reads every variable', () => {
    const config = readConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u:p@db:5432/mailroom',
      MAILROOM_API_KEY: `re_${'a'.repeat(32)}`,
      SMTP_URL: 'smtps://user:pass@smtp.example.com:465',
      LOG_LEVEL: 'warn',
    });
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'postgres://u:p@db:5432/mailroom');
    assert.equal(config.smtpUrl, 'smtps://user:pass@smtp.example.com:465');
    assert.equal(readConfig({ MAILROOM_PUBLIC_URL: 'https://mail.example.com/' }).publicUrl, 'https://mail.example.com');
  });

  it('refuses a bad value with an error naming the variable', () => {
    const bad: Record<string, string> = {
      PORT: 'abc',
      DATABASE_URL: 'mysql://localhost/x',
      MAILROOM_API_KEY: 're_short',
      MAILROOM_PUBLIC_URL: 'not a url',
      SMTP_URL: 'http://relay.example.com',
      LOG_LEVEL: 'loud',
      MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS: 'maybe',
      MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'maybe',
      WORKER_CONCURRENCY: '0',
      MAILROOM_SECRET: 'too-short',
      DELIVERY_MODE: 'pigeon',
      DNS_SERVERS: '1.1.1.1,dns.google',
      MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'maybe',
      DIRECT_SMTP_PORT: '0',
      DIRECT_MAX_CONNECTIONS: '0',
      MAILROOM_HOSTNAME: 'mail server',
      WORKER_HEALTH_PORT: '0',
      SMTP_HEALTH_PORT: '0',
      MAILROOM_RETENTION_DAYS: '-1',
      MAILROOM_API_LOGS: 'off',
      MAILROOM_LOG_BODY_BYTES: '2097152',
    };
    for (const [name, value] of Object.entries(bad)) {
      assert.throws(() => readConfig({ [name]: value }), (error: Error) => error instanceof ConfigError && error.message.includes(name), name);
    }
  });

  it('DELIVERY_MODE follows SMTP_URL unless named, and refuses a contradiction', () => {
    assert.equal(readConfig({}).deliveryMode, 'capture');
    assert.equal(readConfig({ SMTP_URL: 'smtp://relay.example.com' }).deliveryMode, 'relay');
    assert.equal(readConfig({ DELIVERY_MODE: 'direct' }).deliveryMode, 'direct');
    assert.equal(readConfig({ DELIVERY_MODE: 'relay', SMTP_URL: 'smtp://relay.example.com' }).deliveryMode, 'relay');
    for (const env of [{ DELIVERY_MODE: 'relay' }, { DELIVERY_MODE: 'direct', SMTP_URL: 'smtp://r.example.com' }, { DELIVERY_MODE: 'capture', SMTP_URL: 'smtp://r.example.com' }]) {
      assert.throws(() => readConfig(env), (error: Error) => error instanceof ConfigError && /DELIVERY_MODE/.test(error.message), JSON.stringify(env));
    }
  });

  it('RELAY_ENVELOPE_SENDER: sender by default, verp, login (SMTP_URL’s user) or an address; relay mode only', () => {
    const relay = { SMTP_URL: 'smtp://mailer%40relay.example.com:pw@relay.example.com' };
    assert.equal(readConfig(relay).relayEnvelopeSender, 'sender');
    assert.equal(readConfig({}).relayEnvelopeSender, 'sender');
    assert.equal(readConfig({ ...relay, RELAY_ENVELOPE_SENDER: 'verp' }).relayEnvelopeSender, 'verp');
    assert.deepEqual(readConfig({ ...relay, RELAY_ENVELOPE_SENDER: 'login' }).relayEnvelopeSender, { address: 'mailer@relay.example.com' });
    assert.deepEqual(readConfig({ ...relay, RELAY_ENVELOPE_SENDER: 'bounces@example.com' }).relayEnvelopeSender, { address: 'bounces@example.com' });
    for (const env of [
      { ...relay, RELAY_ENVELOPE_SENDER: 'nobody' },
      { ...relay, RELAY_ENVELOPE_SENDER: 'a@b.c\r\nRCPT TO:<x@y.z>' },
      { SMTP_URL: 'smtp://mailer:pw@relay.example.com', RELAY_ENVELOPE_SENDER: 'login' },
      { DELIVERY_MODE: 'direct', RELAY_ENVELOPE_SENDER: 'sender' },
    ]) {
      assert.throws(() => readConfig(env), (error: Error) => error instanceof ConfigError && /RELAY_ENVELOPE_SENDER/.test(error.message), JSON.stringify(env));
    }
  });

  it('requires verified domains by default in direct mode only; direct delivery, DNS and host name settings', () => {
    assert.equal(readConfig({}).requireVerifiedDomain, false);
    assert.equal(readConfig({ SMTP_URL: 'smtp://relay.example.com' }).requireVerifiedDomain, false);
    assert.equal(readConfig({ DELIVERY_MODE: 'direct' }).requireVerifiedDomain, true);
    assert.equal(readConfig({ DELIVERY_MODE: 'direct', MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'false' }).requireVerifiedDomain, false);
    assert.equal(readConfig({ MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'true' }).requireVerifiedDomain, true);

    const defaults = readConfig({});
    assert.deepEqual(defaults.direct, { port: 25, maxConnections: 5 });
    assert.equal(defaults.dnsServers, undefined);
    assert.equal(defaults.mailHostname, hostname());
    const set = readConfig({ DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53,::1', DIRECT_SMTP_PORT: '2525', DIRECT_MAX_CONNECTIONS: '3', MAILROOM_HOSTNAME: 'Mail.Example.com' });
    assert.deepEqual(set.dnsServers, ['1.1.1.1', '127.0.0.1:5353', '[::1]:53', '::1']);
    assert.deepEqual(set.direct, { port: 2525, maxConnections: 3 });
    assert.equal(set.mailHostname, 'mail.example.com');
    assert.throws(() => readConfig({ DNS_SERVERS: '1.1.1.1:99999' }), /DNS_SERVERS/);

    assert.equal(set.bounceDomain, 'mail.example.com', 'bounces go to MAILROOM_HOSTNAME by default');
    assert.equal(readConfig({ MAILROOM_HOSTNAME: 'mail.example.com', MAILROOM_BOUNCE_DOMAIN: 'Bounces.Example.com' }).bounceDomain, 'bounces.example.com');
    assert.throws(() => readConfig({ MAILROOM_BOUNCE_DOMAIN: 'not a host' }), /MAILROOM_BOUNCE_DOMAIN/);
  });

  it('reads the deliverability settings: the sending addresses (else MAILROOM_HOSTNAME\'s) and the blocklist zones', () => {
    const defaults = readConfig({});
    assert.equal(defaults.sendingIps, undefined);
    assert.deepEqual(defaults.dnsblZones, ['zen.spamhaus.org', 'bl.spamcop.net', 'psbl.surriel.com']);
    const set = readConfig({ MAILROOM_SENDING_IPS: '203.0.113.5, 2001:db8::5', MAILROOM_DNSBL_ZONES: 'Zen.Spamhaus.org,bl.example.net' });
    assert.deepEqual(set.sendingIps, ['203.0.113.5', '2001:db8::5']);
    assert.deepEqual(set.dnsblZones, ['zen.spamhaus.org', 'bl.example.net']);
    assert.deepEqual(readConfig({ MAILROOM_DNSBL_ZONES: 'none' }).dnsblZones, []);
    assert.throws(() => readConfig({ MAILROOM_SENDING_IPS: '203.0.113.5,mail.example.com' }), /Invalid MAILROOM_SENDING_IPS: .*got "mail\.example\.com"/);
    assert.throws(() => readConfig({ MAILROOM_DNSBL_ZONES: 'zen.spamhaus.org,,bl.example.net' }), /Invalid MAILROOM_DNSBL_ZONES/);
    assert.throws(() => readConfig({ MAILROOM_DNSBL_ZONES: 'not a zone' }), /Invalid MAILROOM_DNSBL_ZONES/);
  });

  it('reads the guards: rates as fractions or percentages, from 0 to 1', () => {
    assert.deepEqual(readConfig({}).guards, { minSends: 200, bounceRate: 0.04, complaintRate: 0.003, recheckMs: 60_000 });
    const set = readConfig({ MAILROOM_GUARD_MIN_SENDS: '50', MAILROOM_GUARD_BOUNCE_RATE: '5%', MAILROOM_GUARD_COMPLAINT_RATE: '0.002' }).guards;
    assert.deepEqual([set.minSends, set.bounceRate, set.complaintRate], [50, 0.05, 0.002]);
    for (const bad of ['%', 'high', '150%', '-0.1', '2']) assert.throws(() => readConfig({ MAILROOM_GUARD_BOUNCE_RATE: bad }), /Invalid MAILROOM_GUARD_BOUNCE_RATE: expected a rate such as 0\.04 or 4%/);
    assert.throws(() => readConfig({ MAILROOM_GUARD_MIN_SENDS: '0' }), /Invalid MAILROOM_GUARD_MIN_SENDS/);
  });

  it('refuses a SQLite file in a folder that does not exist, but for the default ./data', () => {
    const missing = join(tmpdir(), `mailroom-missing-${process.pid}`, 'mailroom.db');
    assert.throws(() => readConfig({ DATABASE_URL: missing }), (error: Error) => error instanceof ConfigError && error.message.includes('DATABASE_URL'));
    assert.equal(readConfig({}).databaseUrl, './data/mailroom.db');
    assert.equal(readConfig({ DATABASE_URL: 'data/other.db' }).databaseUrl, 'data/other.db');
    assert.equal(readConfig({ DATABASE_URL: join(tmpdir(), 'mailroom.db') }).databaseUrl, join(tmpdir(), 'mailroom.db'));
    assert.ok(!existsSync(dirname(missing)), 'nothing was created');
  });

  it('reads the role from the command line, and refuses anything else by name', () => {
    assert.equal(roleName(readRole([])), 'all');
    assert.deepEqual([...readRole(['--role', 'all'])], ['api', 'worker', 'smtp']);
    assert.equal(roleName(readRole(['--role', 'worker'])), 'worker');
    assert.equal(roleName(readRole(['--role=api'])), 'api');
    assert.equal(roleName(readRole(['--role=smtp,api'])), 'api,smtp');
    for (const [args, named] of [[['--rol', 'worker'], '--rol'], [['worker'], 'worker'], [['--role', 'workers'], 'workers'], [['--role'], '--role'], [['--role', 'api,inbound'], 'api,inbound']] as const) {
      assert.throws(() => readRole([...args]), (error: Error) => error instanceof ConfigError && error.message.includes(named), args.join(' '));
    }
    assert.equal(readConfig({ WORKER_HEALTH_PORT: '9001' }).worker.healthPort, 9001);
    assert.equal(readConfig({}).worker.healthPort, undefined);
    assert.equal(readConfig({ SMTP_HEALTH_PORT: '9002' }).smtpHealthPort, 9002);
    assert.equal(readConfig({}).smtpHealthPort, undefined);
  });

  it('reads the inbound SMTP settings, and the TLS pair as two files or none', () => {
    const defaults = readConfig({ HOST: '127.0.0.1' });
    assert.deepEqual(defaults.inbound, { port: undefined, host: '127.0.0.1', maxMessageBytes: 40 * 1024 * 1024, maxRecipients: 100, maxClientConnections: 10 });
    assert.equal(defaults.smtpTls, undefined);
    const set = readConfig({ INBOUND_SMTP_PORT: '2525', INBOUND_SMTP_HOST: '::1', INBOUND_MAX_MESSAGE_BYTES: '1048576', INBOUND_MAX_RECIPIENTS: '5', INBOUND_MAX_CONNECTIONS_PER_CLIENT: '2' });
    assert.deepEqual(set.inbound, { port: 2525, host: '::1', maxMessageBytes: 1048576, maxRecipients: 5, maxClientConnections: 2 });
    const file = fileURLToPath(import.meta.url);
    assert.deepEqual(readConfig({ SMTP_TLS_CERT: file, SMTP_TLS_KEY: file }).smtpTls, { certFile: file, keyFile: file });
    assert.throws(() => readConfig({ SMTP_TLS_CERT: file }), /Invalid SMTP_TLS_KEY: SMTP_TLS_CERT and SMTP_TLS_KEY go together/);
    assert.throws(() => readConfig({ SMTP_TLS_CERT: file, SMTP_TLS_KEY: '/nowhere/key.pem' }), /Invalid SMTP_TLS_KEY: the file \/nowhere\/key.pem does not exist/);
    assert.throws(() => readConfig({ INBOUND_SMTP_PORT: 'twenty-five' }), /Invalid INBOUND_SMTP_PORT/);
  });

  it('reads the SMTP submission settings: no listener by default, AUTH only over TLS', () => {
    const defaults = readConfig({ HOST: '127.0.0.1' });
    assert.deepEqual(defaults.submission, { port: undefined, tlsPort: undefined, host: '127.0.0.1', allowInsecureAuth: false, maxClientConnections: 10, maxAuthFailures: 10 });
    const set = readConfig({
      SUBMISSION_PORT: '587',
      SUBMISSION_TLS_PORT: '465',
      SUBMISSION_HOST: '::1',
      SUBMISSION_ALLOW_INSECURE_AUTH: 'true',
      SUBMISSION_MAX_CONNECTIONS_PER_CLIENT: '4',
      SUBMISSION_MAX_AUTH_FAILURES: '3',
    });
    assert.deepEqual(set.submission, { port: 587, tlsPort: 465, host: '::1', allowInsecureAuth: true, maxClientConnections: 4, maxAuthFailures: 3 });
    assert.throws(() => readConfig({ SUBMISSION_ALLOW_INSECURE_AUTH: 'yes' }), /Invalid SUBMISSION_ALLOW_INSECURE_AUTH: expected true or false/);
  });

  it('reads how the SMTP listeners read DATA: 10 minutes and 500 bytes a second by default', () => {
    assert.deepEqual(readConfig({}).smtpData, { timeoutMs: 600_000, minBytesPerSecond: 500 });
    assert.deepEqual(readConfig({ SMTP_DATA_TIMEOUT_MS: '120000', SMTP_DATA_MIN_RATE: '0' }).smtpData, { timeoutMs: 120_000, minBytesPerSecond: 0 });
    assert.throws(() => readConfig({ SMTP_DATA_TIMEOUT_MS: '10' }), /^Error: Invalid SMTP_DATA_TIMEOUT_MS: expected a whole number from 1000 to 86400000, got "10"$/);
    assert.throws(() => readConfig({ SMTP_DATA_MIN_RATE: 'fast' }), /Invalid SMTP_DATA_MIN_RATE/);
  });

  it('reads the providers\' feedback settings: none by default, and refuses a bad one without echoing a secret', () => {
    assert.deepEqual(readConfig({}).feedback, { ses: undefined, postmark: undefined, mailgun: undefined, sendgrid: undefined });
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ses-feedback';
    assert.deepEqual(readConfig({ FEEDBACK_SES_TOPICS: `${arn}, ${arn.replace('ses-', 'other-')}` }).feedback.ses, { topics: [arn, arn.replace('ses-', 'other-')], certHost: undefined, caFile: undefined });
    assert.equal(readConfig({ FEEDBACK_SES_TOPICS: '*' }).feedback.ses?.topics, '*');
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    assert.equal(readConfig({ FEEDBACK_SENDGRID_KEY: key }).feedback.sendgrid, key);
    assert.throws(() => readConfig({ FEEDBACK_SES_TOPICS: 'my-topic' }), /^Error: Invalid FEEDBACK_SES_TOPICS: expected \* or comma-separated SNS topic ARNs/);
    assert.throws(() => readConfig({ FEEDBACK_SES_TOPICS: '*', FEEDBACK_SNS_CA: '/nowhere/ca.pem' }), /Invalid FEEDBACK_SNS_CA: the file \/nowhere\/ca.pem does not exist/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const [name, value] of [['FEEDBACK_POSTMARK_AUTH', 'no-colon-secret'], ['FEEDBACK_MAILGUN_KEY', 'short-secret'], ['FEEDBACK_SENDGRID_KEY', 'not a key but long enough to be read as one'], ['FEEDBACK_SENDGRID_KEY', rsa]] as const) {
      assert.throws(() => readConfig({ [name]: value }), (error: Error) => error instanceof ConfigError && error.message.startsWith(`Invalid ${name}`) && !error.message.includes(value), name);
    }
  });

  it('stops start-up with one clear line', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /PORT/);
  });

  it('creates a secret beside a SQLite database once, and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-secret-'));
    const config = readConfig({ DATABASE_URL: join(dir, 'mailroom.db') });
    const first = resolveSecret(config);
    assert.ok(first.length >= 32);
    assert.equal(statSync(join(dir, 'secret')).mode & 0o777, 0o600);
    assert.equal(resolveSecret(config), first);
    assert.equal(readFileSync(join(dir, 'secret'), 'utf8').trim(), first);
    const given = 'g'.repeat(40);
    assert.equal(resolveSecret(readConfig({ DATABASE_URL: join(dir, 'other.db'), MAILROOM_SECRET: given })), given);
  });

  it('creates the database, WAL and shared memory for their owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-mode-'));
    const database = { url: join(dir, 'mailroom.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
    const t = await startApp('sqlite', { worker: false, database });
    try {
      await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 's', text: 't' });
      for (const file of ['mailroom.db', 'mailroom.db-wal', 'mailroom.db-shm']) {
        assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600, file);
      }
    } finally {
      await t.close();
      await database.drop();
    }
  });

  it('requires MAILROOM_SECRET with PostgreSQL, so that every process shares it', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', MAILROOM_SECRET: '' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /MAILROOM_SECRET/);
    assert.ok(!existsSync('secret'));
  });
});
