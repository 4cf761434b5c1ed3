// A worker thread that composes and signs messages, so that this CPU work runs beside the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { asBuffer, describeError, movable } from '../../threads.ts';
import type { AttachmentRow, EmailRow } from '../../store/emails.ts';
import { trackingKey } from '../tracking/tracking-tokens.ts';
import type { Tracking } from '../tracking/tracked-html.ts';
import { buildMessage, buildTrackedMessages } from './signed-message.ts';
import { createDkimSigner, type SigningDomain } from '../../delivery/dkim.ts';

/**
 * A message to build: an email's fields and attachments (and its date, in epoch ms), or a submitted
 * source. With `trackings` (a domain that tracks), one message per recipient's tracking.
 */
export type Build = { domain: SigningDomain | undefined } & (
  | { email: EmailRow; attachments: AttachmentRow[]; date: number; trackings?: Tracking[] }
  | { source: Uint8Array }
);

export type BuildRequest = Build & { id: number };

const { secret } = workerData as { secret: string };
const dkim = createDkimSigner(secret);
const key = trackingKey(secret);

async function build(request: BuildRequest): Promise<Buffer | Buffer[]> {
  const { domain } = request;
  if ('source' in request) return buildMessage(dkim, { source: asBuffer(request.source) }, domain);
  const content = { email: request.email, attachments: request.attachments.map((a) => ({ ...a, content: asBuffer(a.content) })), date: new Date(request.date) };
  if (request.trackings && domain) return buildTrackedMessages(dkim, key, content, domain, request.trackings);
  return buildMessage(dkim, content, domain);
}

parentPort!.on('message', (request: BuildRequest) => void answer(request));

async function answer(request: BuildRequest): Promise<void> {
  try {
    const raw = await build(request);
    // Moved back when it owns its memory (a large message does); a small one from the pool is copied.
    parentPort!.postMessage({ id: request.id, value: raw }, movable([raw].flat()));
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: describeError(error) });
  }
}
