import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { ConfigError, type Config } from '../config.ts';
import type { Context } from '../context.ts';
import { seal, unseal } from '../secrets/encryption.ts';
import { dataDirectory } from '../secrets/secret.ts';
import { isPostgresUrl } from '../store/db.ts';
import { findSetting, insertSettingIfAbsent } from '../store/settings.ts';

// The key and certificate the SMTP listeners present for STARTTLS: the operator's PEM files
// (SMTP_TLS_CERT, SMTP_TLS_KEY), or else a self-signed pair made on the first start and kept, so that
// every start and every process presents the same one. SQLite keeps it in files beside the database;
// PostgreSQL, whose processes share a database but not a disk, in `settings`, sealed with MAILROOM_SECRET.

/** PEM strings, as tls.createSecureContext takes them. */
export interface TlsPair {
  key: string;
  cert: string;
  /** Made here, not given: clients that verify certificates will refuse it. */
  selfSigned: boolean;
}

type Pem = Omit<TlsPair, 'selfSigned'>;

/** The settings row of the sealed pair, also the context it is sealed to. */
const SETTING = 'smtp_tls';
const PURPOSE = 'smtp-tls-pair';
/** The folder beside a SQLite database that holds `key.pem` and `cert.pem`. */
const FOLDER = 'smtp-tls';
const VALID_YEARS = 10;

/** The pair to present: the configured files, else the kept self-signed pair, made if there is none yet. */
export async function smtpTlsPair(ctx: Context): Promise<TlsPair> {
  const { config } = ctx;
  if (config.smtpTls) return { ...readConfiguredPair(config.smtpTls), selfSigned: false };
  const pair = isPostgresUrl(config.databaseUrl) ? await storedPair(ctx) : await keptFilesPair(ctx);
  return { ...pair, selfSigned: true };
}

/** The start-up warning for a self-signed pair. */
export function selfSignedWarning(config: Config): string {
  return `SMTP clients will see a self-signed certificate for ${config.mailHostname}: set SMTP_TLS_CERT and SMTP_TLS_KEY to the PEM files of a certificate they trust`;
}

/** Runs `step`; its failure becomes the one start-up line that names `variable`. */
function checked<T>(variable: string, why: (error: NodeJS.ErrnoException) => string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw new ConfigError(`Invalid ${variable}: ${why(error as NodeJS.ErrnoException)}`);
  }
}

/** The operator's files, read and checked once, so that a bad one stops the start rather than each STARTTLS. */
function readConfiguredPair({ certFile, keyFile }: NonNullable<Config['smtpTls']>): Pem {
  const cert = checked('SMTP_TLS_CERT', (error) => `cannot read ${certFile} (${error.code ?? error.message})`, () => readFileSync(certFile, 'utf8'));
  const key = checked('SMTP_TLS_KEY', (error) => `cannot read ${keyFile} (${error.code ?? error.message})`, () => readFileSync(keyFile, 'utf8'));
  const certificate = checked('SMTP_TLS_CERT', () => `${certFile} is not a PEM certificate`, () => new X509Certificate(cert));
  const privateKey = checked('SMTP_TLS_KEY', () => `${keyFile} is not a PEM private key without a passphrase`, () => createPrivateKey(key));
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`Invalid SMTP_TLS_KEY: ${keyFile} is not the key of the certificate in ${certFile} (SMTP_TLS_CERT)`);
  }
  return { key, cert };
}

/** A new self-signed pair for the mail hostname (its CN, and the DNS subjectAltName selfsigned adds for it). */
async function createPair(ctx: Context): Promise<Pem> {
  const notBeforeDate = new Date(ctx.clock.now());
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + VALID_YEARS);
  const attributes = [{ name: 'commonName', value: ctx.config.mailHostname }];
  const pems = await generate(attributes, { keySize: 2048, algorithm: 'sha256', notBeforeDate, notAfterDate });
  return { key: pems.private, cert: pems.cert };
}

/** PostgreSQL: the sealed pair in `settings`; of processes making one at once, all keep the first committed. */
async function storedPair(ctx: Context): Promise<Pem> {
  const why = () => 'it does not open the SMTP TLS pair kept in the database, sealed with another secret';
  const open = (sealed: string) => JSON.parse(checked('MAILROOM_SECRET', why, () => unseal(ctx.secret, PURPOSE, SETTING, sealed))) as Pem;
  const stored = await findSetting(ctx.db, SETTING);
  if (stored !== undefined) return open(stored);
  const sealed = seal(ctx.secret, PURPOSE, SETTING, JSON.stringify(await createPair(ctx)));
  return open(await insertSettingIfAbsent(ctx.db, SETTING, sealed));
}

/**
 * SQLite: `smtp-tls/key.pem` and `smtp-tls/cert.pem` beside the database. A new pair is written to a
 * folder of its own and renamed into place, which fails once the folder is there: a process that loses
 * that race reads the winner's pair, never half of one.
 */
async function keptFilesPair(ctx: Context): Promise<Pem> {
  const dir = dataDirectory(ctx.config);
  const folder = join(dir, FOLDER);
  const read = (): Pem => ({ key: readFileSync(join(folder, 'key.pem'), 'utf8'), cert: readFileSync(join(folder, 'cert.pem'), 'utf8') });
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const pair = await createPair(ctx);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const draft = mkdtempSync(join(dir, `.${FOLDER}-`));
  // On disk before the rename: a crash must not leave an empty key in place for good.
  writeFileSync(join(draft, 'key.pem'), pair.key, { mode: 0o600, flush: true });
  writeFileSync(join(draft, 'cert.pem'), pair.cert, { flush: true });
  try {
    renameSync(draft, folder);
    return pair;
  } catch (error) {
    rmSync(draft, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    return read();
  }
}
