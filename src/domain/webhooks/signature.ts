import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature (what Svix, and so Resend, send): `v1,` and the base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}` under the base64-decoded part of the `whsec_` secret. Sent under both
 * header sets, `svix-*` (what Resend's docs verify) and `webhook-*` (what the standardwebhooks library
 * and Resend's SDK read).
 */
export function signatureHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const timestamp = String(timestampSeconds);
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  return {
    'svix-id': id,
    'svix-timestamp': timestamp,
    'svix-signature': signature,
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
  };
}
