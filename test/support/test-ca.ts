// A certificate authority made for a test, and server certificates it issues for host names or
// addresses: what an outbound TLS client that checks certificates (MTA-STS, SNS's certificate host) is
// told to trust (MAILROOM_OUTBOUND_CA, FEEDBACK_SNS_CA).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TestCa {
  /** The CA's PEM file. */
  caFile: string;
  /** A key and certificate for `names` (DNS names or IP addresses), issued by the CA. */
  issue(names: string[]): Promise<{ key: string; cert: string }>;
  close(): void;
}

export async function createTestCa(): Promise<TestCa> {
  const ca = await generate([{ name: 'commonName', value: 'Mailroom Test CA' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-ca-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  return {
    caFile,
    async issue(names) {
      const pair = await generate([{ name: 'commonName', value: names[0]! }], {
        keySize: 2048,
        algorithm: 'sha256',
        ca: { key: ca.private, cert: ca.cert },
        extensions: [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          { name: 'subjectAltName', altNames: names.map((value) => (isIP(value) ? { type: 7 as const, ip: value } : { type: 2 as const, value })) },
        ],
      });
      return { key: pair.private, cert: pair.cert };
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
