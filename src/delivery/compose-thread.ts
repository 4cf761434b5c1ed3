// A worker thread that composes and signs messages, so that this CPU work runs beside the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { asBuffer, describeError, movable } from '../threads.ts';
import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { buildMessage } from './signed-message.ts';
import { createDkimSigner, type SigningDomain } from './dkim.ts';

/** A message to build: an email's fields and attachments (and its date, in epoch ms), or a submitted source. */
export type Build = { domain: SigningDomain | undefined } & (
  | { email: EmailRow; attachments: AttachmentRow[]; date: number }
  | { source: Uint8Array }
);

export type BuildRequest = Build & { id: number };

const dkim = createDkimSigner((workerData as { secret: string }).secret);

parentPort!.on('message', async (request: BuildRequest) => {
  const { id, domain } = request;
  try {
    const content =
      'source' in request
        ? { source: asBuffer(request.source) }
        : { email: request.email, attachments: request.attachments.map((a) => ({ ...a, content: asBuffer(a.content) })), date: new Date(request.date) };
    const raw = await buildMessage(dkim, content, domain);
    // Moved back when it owns its memory (a large message does); a small one from the pool is copied.
    parentPort!.postMessage({ id, value: raw }, movable([raw]));
  } catch (error) {
    parentPort!.postMessage({ id, error: describeError(error) });
  }
});
