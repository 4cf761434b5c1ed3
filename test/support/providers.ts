// The providers that relay mail, as their notifications reach Mailroom: signed the way each signs
// (SNS's RSA signatures with a certificate served over HTTPS, Postmark's basic auth, Mailgun's HMAC,
// SendGrid's ECDSA), in the formats each documents. SNS's certificate host is a real HTTPS server on
// 127.0.0.1, its certificate issued by a CA made here, which the app is told to trust.
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { createTestCa } from './test-ca.ts';

export const TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:ses-feedback';
export const MAILGUN_KEY = 'key-0123456789abcdef0123456789abcdef';
export const POSTMARK_AUTH = 'postmark:s3cret-hook-password';

export interface SnsHost {
  /** `127.0.0.1:<port>`: FEEDBACK_SNS_HOST. */
  host: string;
  /** The CA's PEM file: FEEDBACK_SNS_CA. */
  caFile: string;
  /** The URL of the signing certificate. */
  certUrl: string;
  /** The paths (with query) fetched so far. */
  fetched: string[];
  /** Signs a message with the certificate's key, SignatureVersion 1 (SHA1withRSA) or 2 (SHA256withRSA). */
  signature(canonical: string, version: '1' | '2'): string;
  /** A host that is not SNS's (another port, a certificate the CA issued all the same) serving a signing certificate of its own. */
  impostor: { host: string; certUrl: string; fetched: string[]; signature(canonical: string, version: '1' | '2'): string };
  close(): Promise<void>;
}

/** A CA, a server certificate for 127.0.0.1 it issued, and a signing certificate; the HTTPS server serving the last. */
export async function startSnsHost(): Promise<SnsHost> {
  const ca = await createTestCa();
  const server = await ca.issue(['127.0.0.1']);
  const sns = await certificateHost(server, await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256' }));
  const impostor = await certificateHost(server, await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256' }));
  return {
    ...sns,
    caFile: ca.caFile,
    impostor,
    close: async () => {
      await sns.close();
      await impostor.close();
      ca.close();
    },
  };
}

/** An HTTPS server on 127.0.0.1 serving `signing`'s certificate, and answering subscription confirmations. */
async function certificateHost(server: { key: string; cert: string }, signing: { private: string; cert: string }) {
  const fetched: string[] = [];
  const https = createServer(server, (request, response) => {
    fetched.push(request.url ?? '');
    if (request.url === '/SimpleNotificationService-test.pem') return void response.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' }).end(signing.cert);
    if (request.url?.startsWith('/?Action=ConfirmSubscription')) return void response.writeHead(200, { 'content-type': 'text/xml' }).end('<ConfirmSubscriptionResponse/>');
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(https.address() as AddressInfo).port}`;
  return {
    host,
    certUrl: `https://${host}/SimpleNotificationService-test.pem`,
    fetched,
    signature: (canonical: string, version: '1' | '2') => sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(canonical), signing.private).toString('base64'),
    close: async () => {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    },
  };
}

type SnsFields = Record<string, string>;

/** SNS's string to sign (its documented field order; Subject only when present). */
function canonical(fields: SnsFields): string {
  const names = fields.Type === 'Notification' ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return names.filter((name) => fields[name] !== undefined).map((name) => `${name}\n${fields[name]}\n`).join('');
}

/** An SNS message as SNS posts it, signed with the host's certificate (or the impostor's). */
export function snsMessage(sns: Pick<SnsHost, 'certUrl' | 'signature'>, fields: SnsFields, version: '1' | '2' = '1'): SnsFields {
  const message: SnsFields = { MessageId: randomUUID(), TopicArn: TOPIC_ARN, Timestamp: new Date().toISOString(), ...fields, SignatureVersion: version, SigningCertURL: sns.certUrl };
  return { ...message, Signature: sns.signature(canonical(message), version) };
}

/** An SNS Notification carrying an SES notification. */
export function sesNotification(sns: SnsHost, ses: Record<string, unknown>, version: '1' | '2' = '1'): SnsFields {
  return snsMessage(sns, { Type: 'Notification', Message: JSON.stringify(ses) }, version);
}

/** A SubscriptionConfirmation whose SubscribeURL is on the host. */
export function subscriptionConfirmation(sns: SnsHost): SnsFields {
  const token = randomBytes(32).toString('hex');
  return snsMessage(sns, {
    Type: 'SubscriptionConfirmation',
    Token: token,
    Message: `You have chosen to subscribe to the topic ${TOPIC_ARN}.`,
    SubscribeURL: `https://${sns.host}/?Action=ConfirmSubscription&TopicArn=${TOPIC_ARN}&Token=${token}`,
  });
}

/** SES's `mail` object of a message SES took (its id) with our Message-ID among its headers. */
export function sesMail(providerId: string, messageId: string, to: string[]): Record<string, unknown> {
  return {
    timestamp: new Date().toISOString(),
    source: 'news@example.com',
    messageId: providerId,
    destination: to,
    headersTruncated: false,
    headers: [{ name: 'From', value: 'Acme <news@example.com>' }, { name: 'Message-ID', value: messageId }],
    commonHeaders: { from: ['Acme <news@example.com>'], to, messageId, subject: 'Hello' },
  };
}

/** Postmark's basic auth header for `user:password`. */
export const basicAuth = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

/** A Mailgun webhook body: `event-data`, and its signature under `key` at `timestamp` (seconds). */
export function mailgunHook(eventData: Record<string, unknown>, timestamp = Math.floor(Date.now() / 1000), key = MAILGUN_KEY): Record<string, unknown> {
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex');
  return { signature: { timestamp: String(timestamp), token, signature }, 'event-data': eventData };
}

/** SendGrid's signing pair: the verification key as its settings page shows it (base64 DER), and a signer. */
export function sendgridKeys(): { verificationKey: string; sign(timestamp: string, body: string): string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    verificationKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    sign: (timestamp, body) => sign('sha256', Buffer.concat([Buffer.from(timestamp), Buffer.from(body)]), privateKey).toString('base64'),
  };
}
