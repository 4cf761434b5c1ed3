// A worker thread that composes and signs messages, so that this CPU work runs beside the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { asBuffer, describeError, movable } from '../threads.ts';
import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { buildMessage } from './signed-message.ts';
import { createDkimSigner, type SigningDomain } from './dkim.ts';

export interface BuildRequest {
  id: number;
  email: EmailRow;
  attachments: AttachmentRow[];
  date: number;
  domain: SigningDomain | undefined;
}

const dkim = createDkimSigner((workerData as { secret: string }).secret);

parentPort!.on('message', async ({ id, email, attachments, date, domain }: BuildRequest) => {
  try {
    const rows = attachments.map((a) => ({ ...a, content: asBuffer(a.content) }));
    const raw = await buildMessage(dkim, email, rows, new Date(date), domain);
    // Moved back when it owns its memory (a large message does); a small one from the pool is copied.
    parentPort!.postMessage({ id, value: raw }, movable([raw]));
  } catch (error) {
    parentPort!.postMessage({ id, error: describeError(error) });
  }
});
