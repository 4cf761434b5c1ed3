// What a message to a DMARC report address holds: its report files, each read (report-files.ts,
// aggregate-report.ts) or refused with its reason. Pure: the reader thread runs it, so a hostile file
// costs that thread at most what the caps allow, never the event loop.
import { parseMessage } from '../receiving/read-message.ts';
import { DMARC_LIMITS, ReportRefusal, readAggregateReport, type AggregateReport } from './aggregate-report.ts';
import { fileKind, gunzipReport, unzipReports, type Part } from './report-files.ts';

export interface DmarcMessage {
  reports: AggregateReport[];
  /** Why each file that looked like a report was not read. */
  refused: string[];
}

const named = (part: Part) => part.filename ?? part.content_type;

function readFile(part: Part): AggregateReport[] {
  const kind = fileKind(part)!;
  if (kind !== 'xml' && part.content.length > DMARC_LIMITS.compressedBytes) throw new ReportRefusal(`it is over ${DMARC_LIMITS.compressedBytes} bytes compressed`);
  if (kind === 'zip') return unzipReports(part.content).map(readAggregateReport);
  return [readAggregateReport(kind === 'gzip' ? gunzipReport(part.content) : part.content)];
}

/** The reports of a message, and the files refused; both empty when it carries none (a person's mail). */
export async function readDmarcMessage(raw: Buffer): Promise<DmarcMessage> {
  const message = await parseMessage(raw);
  const parts: Part[] = [...message.attachments];
  // A few reporters send the XML as the message's body.
  if (parts.length === 0 && message.text && /^\s*(<\?xml|<feedback)/.test(message.text)) {
    parts.push({ filename: 'report.xml', content_type: 'text/xml', content: Buffer.from(message.text) });
  }
  const files = parts.filter((part) => fileKind(part) !== undefined);
  const result: DmarcMessage = { reports: [], refused: [] };
  for (const [at, part] of files.entries()) {
    if (at >= DMARC_LIMITS.files) {
      result.refused.push(`${files.length - at} files past the first ${DMARC_LIMITS.files} were not read`);
      break;
    }
    try {
      result.reports.push(...readFile(part));
    } catch (error) {
      // Whatever stops the reading of a file is the file's doing: a refusal names its cap, else the parser's words.
      result.refused.push(`${named(part)}: ${error instanceof ReportRefusal ? error.message : `unreadable (${(error as Error).message})`}`);
    }
  }
  return result;
}
