// The files a DMARC report comes in: XML, gzip (`.xml.gz`) or zip (`.zip`), inflated by fflate under
// two caps: the size each declares (gzip's trailer, zip's header) and the bytes really produced. The
// compressed bytes are fed a kilobyte at a time, so a bomb stops within a megabyte past the cap, its
// CPU time bounded by the cap, not by what it would inflate to.
import { Gunzip, Unzip, UnzipInflate } from 'fflate';
import { DMARC_LIMITS, ReportRefusal } from './aggregate-report.ts';

/** A message part, as the message parser gives it. */
export interface Part {
  filename: string | null;
  content_type: string;
  content: Uint8Array;
}

export type FileKind = 'xml' | 'gzip' | 'zip';

/** Deflate makes at most about 1,032 bytes of a byte: a kilobyte in makes at most about a megabyte out. */
const SLICE = 1024;

const isGzip = (b: Uint8Array) => b[0] === 0x1f && b[1] === 0x8b;
const isZip = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

/**
 * What kind of report file a part is, by its bytes, then its name and type; undefined for a part that
 * is no DMARC report (a text part, or a TLS report, `.json.gz`, which may come to the same address).
 */
export function fileKind(part: Part): FileKind | undefined {
  const name = (part.filename ?? '').toLowerCase();
  const type = part.content_type.toLowerCase();
  if (name.includes('.json') || type.startsWith('application/tlsrpt')) return undefined;
  if (isZip(part.content)) return 'zip';
  if (isGzip(part.content)) return 'gzip';
  if (name.endsWith('.xml') || type === 'text/xml' || type === 'application/xml') return 'xml';
  return undefined;
}

const tooLarge = (what: string) => new ReportRefusal(`${what} inflates to more than ${DMARC_LIMITS.xmlBytes} bytes`);

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Feeds `data` to a stream a slice at a time, stopping as soon as `over()` says the output passed its cap. */
function feed(push: (chunk: Uint8Array, final: boolean) => void, data: Uint8Array, over: () => boolean): void {
  for (let at = 0; at < data.length && !over(); at += SLICE) push(data.subarray(at, at + SLICE), at + SLICE >= data.length);
}

/** The XML of a gzip file. */
export function gunzipReport(data: Uint8Array): Uint8Array {
  // ISIZE, the trailer's last 4 bytes: the size it declares (modulo 2^32).
  const declared = data.length >= 18 ? new DataView(data.buffer, data.byteOffset + data.length - 4, 4).getUint32(0, true) : 0;
  if (declared > DMARC_LIMITS.xmlBytes) throw tooLarge(`The gzip file declares ${declared} bytes: it`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const stream = new Gunzip((chunk) => {
    size += chunk.length;
    if (size <= DMARC_LIMITS.xmlBytes) chunks.push(chunk);
  });
  try {
    feed((chunk, final) => stream.push(chunk, final), data, () => size > DMARC_LIMITS.xmlBytes);
  } catch (error) {
    throw new ReportRefusal(`the gzip file is corrupt (${(error as Error).message})`);
  }
  if (size > DMARC_LIMITS.xmlBytes) throw tooLarge('the gzip file');
  return concat(chunks, size);
}

/** The XML files of a zip file (reporters put one), each under the cap, all of them together too. */
export function unzipReports(data: Uint8Array): Uint8Array[] {
  const files: Uint8Array[] = [];
  let total = 0;
  let refusal: ReportRefusal | undefined;
  let entries = 0;
  const stream = new Unzip((file) => {
    if (refusal || !file.name.toLowerCase().endsWith('.xml')) return;
    if (++entries > DMARC_LIMITS.files) return void (refusal = new ReportRefusal(`the zip file holds more than ${DMARC_LIMITS.files} XML files`));
    if ((file.originalSize ?? 0) > DMARC_LIMITS.xmlBytes) return void (refusal = tooLarge(`${file.name} declares ${file.originalSize} bytes: it`));
    const chunks: Uint8Array[] = [];
    let size = 0;
    file.ondata = (error, chunk, final) => {
      if (refusal) return;
      if (error) return void (refusal = new ReportRefusal(`the zip file is corrupt (${error.message})`));
      size += chunk.length;
      total += chunk.length;
      if (total > DMARC_LIMITS.xmlBytes) return void (refusal = tooLarge(`the zip file (${file.name})`));
      chunks.push(chunk);
      if (final) files.push(concat(chunks, size));
    };
    file.start();
  });
  stream.register(UnzipInflate);
  try {
    feed((chunk, final) => stream.push(chunk, final), data, () => refusal !== undefined);
  } catch (error) {
    throw new ReportRefusal(`the zip file is corrupt (${(error as Error).message})`);
  }
  if (refusal) throw refusal;
  if (files.length === 0) throw new ReportRefusal('the zip file holds no XML file');
  return files;
}
