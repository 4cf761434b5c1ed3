import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { generate } from 'selfsigned';
import { ConfigError, readConfig } from '../../src/config.ts';
import { closeContext, createContext, type Context } from '../../src/context.ts';
import { smtpTlsPair, type TlsPair } from '../../src/smtp/tls.ts';
import { findSetting } from '../../src/store/settings.ts';
import { startSmtpServer } from '../support/smtp-server.ts';
import { TEST_ENV, createTestDatabase, dialects, type TestDatabase } from '../support/harness.ts';

// The pair the SMTP listeners present: the operator's files, or one self-signed pair per install, made
// once (even by processes starting together) and kept; then a real STARTTLS handshake with it.

const HOST = 'mx.mailroom.test';

for (const dialect of dialects) {
  describe(`SMTP TLS pair (${dialect})`, () => {
    let database: TestDatabase;
    const contexts: Context[] = [];
    const files = mkdtempSync(join(tmpdir(), 'mailroom-tls-'));
    const open = async (env: Record<string, string> = {}): Promise<Context> => {
      const ctx = await createContext(readConfig({ ...TEST_ENV, DATABASE_URL: database.url, MAILROOM_HOSTNAME: HOST, ...env }));
      contexts.push(ctx);
      return ctx;
    };
    const write = (name: string, content: string): string => {
      writeFileSync(join(files, name), content);
      return join(files, name);
    };

    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(async () => {
      for (const ctx of contexts) await closeContext(ctx);
      await database.drop();
      rmSync(files, { recursive: true, force: true });
    });

    it('makes one self-signed pair for MAILROOM_HOSTNAME, even for two processes starting at once, and keeps it', async () => {
      const a = await open();
      const b = await open();
      const [first, second] = await Promise.all([smtpTlsPair(a), smtpTlsPair(b)]);
      assert.equal(first.selfSigned, true);
      assert.deepEqual(second, first, 'both processes present the pair that won');

      const certificate = new X509Certificate(first.cert);
      assert.match(certificate.subject, new RegExp(`^CN=${HOST}$`, 'm'));
      assert.equal(certificate.subjectAltName, `DNS:${HOST}`);
      assert.equal(certificate.checkHost(HOST), HOST);
      assert.ok(certificate.checkPrivateKey(createPrivateKey(first.key)), 'the key is the certificate’s');
      assert.equal(certificate.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
      const years = (Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)) / (365.25 * 86_400_000);
      assert.ok(years > 9.9 && years < 10.1, `valid ${years} years`);

      assert.deepEqual(await smtpTlsPair(await open()), first, 'a later start presents the same pair');
      if (dialect === 'sqlite') {
        const folder = join(dirname(database.url), 'smtp-tls');
        assert.equal(readFileSync(join(folder, 'key.pem'), 'utf8'), first.key);
        assert.equal(readFileSync(join(folder, 'cert.pem'), 'utf8'), first.cert);
        assert.equal(statSync(join(folder, 'key.pem')).mode & 0o777, 0o600);
        assert.equal(statSync(folder).mode & 0o077, 0, 'the folder is the owner’s alone');
        assert.deepEqual(readdirSync(dirname(database.url)).filter((name) => name.includes('smtp-tls')), ['smtp-tls'], 'the losing draft is gone');
      } else {
        const stored = await findSetting(a.db, 'smtp_tls');
        assert.ok(stored !== undefined && !stored.includes('BEGIN') && !stored.includes(first.key), 'kept sealed');
        const otherSecret = await open({ MAILROOM_SECRET: 'another-secret-another-secret-another-secret' });
        await assert.rejects(smtpTlsPair(otherSecret), (error: Error) => error instanceof ConfigError && error.message.startsWith('Invalid MAILROOM_SECRET: '));
      }
    });

    it('presents the files of SMTP_TLS_CERT and SMTP_TLS_KEY as they are', async () => {
      const pems = await generate([{ name: 'commonName', value: 'mail.example.com' }], { keySize: 2048, algorithm: 'sha256' });
      const pair = await smtpTlsPair(await open({ SMTP_TLS_CERT: write('given.crt', pems.cert), SMTP_TLS_KEY: write('given.key', pems.private) }));
      assert.deepEqual(pair, { key: pems.private, cert: pems.cert, selfSigned: false });
    });

    it('stops on a file it cannot use with a line naming the variable', async () => {
      const pems = await generate([{ name: 'commonName', value: 'mail.example.com' }], { keySize: 2048, algorithm: 'sha256' });
      const other = await generate([{ name: 'commonName', value: 'other.example.com' }], { keySize: 2048, algorithm: 'sha256' });
      const cert = write('good.crt', pems.cert);
      const key = write('good.key', pems.private);
      const cases: [Record<string, string>, RegExp][] = [
        [{ SMTP_TLS_CERT: files, SMTP_TLS_KEY: key }, /^Invalid SMTP_TLS_CERT: cannot read .* \(EISDIR\)$/],
        [{ SMTP_TLS_CERT: write('not.crt', 'hello'), SMTP_TLS_KEY: key }, /^Invalid SMTP_TLS_CERT: .*not\.crt is not a PEM certificate$/],
        [{ SMTP_TLS_CERT: cert, SMTP_TLS_KEY: cert }, /^Invalid SMTP_TLS_KEY: .*good\.crt is not a PEM private key/],
        [{ SMTP_TLS_CERT: cert, SMTP_TLS_KEY: write('other.key', other.private) }, /^Invalid SMTP_TLS_KEY: .*other\.key is not the key of the certificate in .*good\.crt/],
      ];
      for (const [env, line] of cases) {
        const ctx = await open(env);
        await assert.rejects(smtpTlsPair(ctx), (error: Error) => error instanceof ConfigError && line.test(error.message));
      }
    });

    it('serves STARTTLS with the kept pair: a client that skips verification, and one that trusts that certificate, deliver', async () => {
      const pair: TlsPair = await smtpTlsPair(await open());
      const smtp = await startSmtpServer({ key: pair.key, cert: pair.cert, disabledCommands: [] });
      const send = (tls: object) =>
        nodemailer
          .createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, requireTLS: true, tls })
          .sendMail({ from: 'a@example.com', to: 'b@example.org', subject: 'over TLS', text: 'hello' });
      try {
        await send({ rejectUnauthorized: false });
        await send({ ca: pair.cert, servername: HOST });
        await assert.rejects(send({ servername: HOST }), /self[- ]signed/i, 'a client trusting only the usual CAs refuses it');
        await assert.rejects(send({ ca: pair.cert, servername: 'other.example.com' }), /altnames/i, 'the certificate names only the mail hostname');
        assert.equal(smtp.messages.length, 2);
        assert.ok(smtp.messages.every((message) => message.secure));
      } finally {
        await smtp.close();
      }
    });
  });
}
