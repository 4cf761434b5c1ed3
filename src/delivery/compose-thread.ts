// A worker thread that composes and signs messages, so that this CPU work runs beside the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { AttachmentRow, EmailRow } from '../store/emails.ts';
import { buildMessage } from './build-message.ts';
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
    const rows = attachments.map((a) => ({ ...a, content: Buffer.from(a.content) }));
    const raw = await buildMessage(dkim, email, rows, new Date(date), domain);
    // A buffer of its own, so that transferring it never hands over a pooled allocation.
    const out = new Uint8Array(raw);
    parentPort!.postMessage({ id, raw: out }, [out.buffer]);
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
