import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { loadEmailAttachment } from '../emails/sent-attachments.ts';
import { loadReceivedAttachment, loadReceivedMessage } from '../receiving/received-emails.ts';
import { verifyDownloadLink, type PresentedLink } from './download-links.ts';

/** A file a download link serves. */
export interface DownloadFile {
  bytes: Buffer;
  contentType: string;
  filename: string | null;
}

/** Reads the file of one kind by the id its links were signed with; undefined when it is gone. */
export type LoadDownload = (ctx: Context, id: string) => Promise<DownloadFile | undefined>;

/** Every kind of file a link may serve. A new kind is one line here, and links made with `downloadLink`. */
const LOADERS = {
  'email-attachment': loadEmailAttachment,
  'received-attachment': loadReceivedAttachment,
  'received-message': loadReceivedMessage,
} satisfies Record<string, LoadDownload>;

export type DownloadKind = keyof typeof LOADERS;

/** GET /downloads/:kind/:id: the file of a valid, unexpired link. */
export async function openDownload(ctx: Context, link: PresentedLink): Promise<DownloadFile> {
  const { kind, id } = verifyDownloadLink(ctx, link);
  // Only a kind that was signed gets here; one since removed is as gone as a deleted file.
  const file = Object.hasOwn(LOADERS, kind) ? await LOADERS[kind as DownloadKind](ctx, id) : undefined;
  if (!file) throw notFound('Download');
  return file;
}
