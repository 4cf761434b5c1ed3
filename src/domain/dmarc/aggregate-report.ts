// A DMARC aggregate report (RFC 7489, appendix C) read from its XML by fast-xml-parser. Anyone can mail
// one, so it is read under caps, in time linear in its size: a DTD is refused before parsing (no entity
// is ever expanded, none fetched), records are counted before the tree is built, and nesting is capped.
import ipaddr from 'ipaddr.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { DmarcReportRowTable } from '../../store/schema.ts';
import { asciiDomain } from '../recipients/addresses.ts';

/** The caps of one report file, and of a message's files. */
export const DMARC_LIMITS = {
  /** A compressed file (gzip, zip) as attached. */
  compressedBytes: 5 * 1024 * 1024,
  /** The XML, once inflated: about 20,000 records of a big reporter. */
  xmlBytes: 16 * 1024 * 1024,
  records: 20_000,
  /** A report nests 5 deep; anything far deeper is no report. */
  depth: 20,
  /** Report files in one message, and XML files in one zip. */
  files: 20,
} as const;

/** Why a file was not read as a report: said in the refusal and the log. */
export class ReportRefusal extends Error {}

export interface AuthResults {
  dkim: { domain: string; selector: string | null; result: string }[];
  spf: { domain: string; scope: string | null; result: string }[];
}

/** One record: messages from one source with one outcome, as its row is stored (schema.ts). */
export type ReportRow = Omit<DmarcReportRowTable, 'dmarc_report_id' | 'position' | 'count' | 'auth_results'> & { count: number; auth_results: AuthResults };

export interface AggregateReport {
  org_name: string;
  email: string | null;
  report_id: string;
  /** Epoch ms. */
  date_begin: number;
  date_end: number;
  /** policy_published's domain, lower-case ASCII. */
  domain: string;
  policy: { p: string | null; sp: string | null; adkim: string | null; aspf: string | null; pct: number | null };
  rows: ReportRow[];
}

const LISTS = new Set(['feedback.record', 'feedback.record.auth_results.dkim', 'feedback.record.auth_results.spf']);

const parser = new XMLParser({
  ignoreAttributes: true,
  processEntities: false,
  parseTagValue: false,
  removeNSPrefix: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: DMARC_LIMITS.depth,
  isArray: (_name, jpath) => LISTS.has(String(jpath)),
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML's five predefined entities and character references, in one pass: no other entity exists here. */
function decodeText(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (entity, name: string) => {
    if (name[0] !== '#') return PREDEFINED[name]!;
    const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}

type Node = Record<string, unknown>;

const refuse = (why: string): never => {
  throw new ReportRefusal(why);
};

/** A text field, decoded and cut at `max`; undefined when absent or not text. */
function text(node: unknown, field: string, max = 255): string | undefined {
  const value = (node as Node | undefined)?.[field];
  if (typeof value !== 'string') return undefined;
  const decoded = decodeText(value).trim();
  return decoded === '' ? undefined : decoded.slice(0, max);
}

const required = (node: unknown, field: string, where: string): string => text(node, field) ?? refuse(`no <${field}> in <${where}>`);

function whole(value: string | undefined, field: string, digits: number): number {
  if (value === undefined || !new RegExp(`^\\d{1,${digits}}$`).test(value)) refuse(`<${field}> is not a whole number`);
  return Number(value);
}

const lower = (value: string | undefined) => value?.toLowerCase();

function authResults(node: unknown): AuthResults {
  const lists = (node ?? {}) as { dkim?: unknown[]; spf?: unknown[] };
  const entries = (list: unknown[] | undefined) => (Array.isArray(list) ? list.slice(0, 20) : []);
  return {
    dkim: entries(lists.dkim).map((d) => ({ domain: lower(text(d, 'domain')) ?? '', selector: text(d, 'selector') ?? null, result: lower(text(d, 'result')) ?? 'none' })),
    spf: entries(lists.spf).map((s) => ({ domain: lower(text(s, 'domain')) ?? '', scope: lower(text(s, 'scope')) ?? null, result: lower(text(s, 'result')) ?? 'none' })),
  };
}

function rowOf(record: unknown, at: number): ReportRow {
  const { row, identifiers, auth_results } = (record ?? {}) as Node;
  const where = `record ${at + 1}`;
  if (typeof row !== 'object' || row === null) refuse(`no <row> in ${where}`);
  const ip = required(row, 'source_ip', 'row');
  if (!ipaddr.isValid(ip)) refuse(`<source_ip> ${JSON.stringify(ip)} of ${where} is not an IP address`);
  const evaluated = (row as Node).policy_evaluated;
  const auth = authResults(auth_results);
  const dkim = auth.dkim.some((d) => d.result === 'pass') ? 'pass' : (auth.dkim[0]?.result ?? 'none');
  return {
    source_ip: ipaddr.process(ip).toString(),
    count: whole(text(row, 'count'), 'count', 9),
    disposition: lower(text(evaluated, 'disposition')) ?? 'none',
    dkim,
    spf: auth.spf[0]?.result ?? 'none',
    dkim_aligned: lower(text(evaluated, 'dkim')) === 'pass' ? 'pass' : 'fail',
    spf_aligned: lower(text(evaluated, 'spf')) === 'pass' ? 'pass' : 'fail',
    header_from: lower(text(identifiers, 'header_from')) ?? '',
    envelope_from: lower(text(identifiers, 'envelope_from')) ?? null,
    auth_results: auth,
  };
}

/** How many `<record>` elements the text opens (any namespace prefix), counted before anything is built. */
function countRecords(xml: string): number {
  return xml.match(/<(?:[A-Za-z_][\w.-]{0,63}:)?record[\s>/]/g)?.length ?? 0;
}

/** Reads the XML of an aggregate report; throws ReportRefusal with the reason when it is not one, or past a cap. */
export function readAggregateReport(bytes: Uint8Array): AggregateReport {
  if (bytes.length > DMARC_LIMITS.xmlBytes) refuse(`the XML is over ${DMARC_LIMITS.xmlBytes} bytes`);
  const xml = new TextDecoder().decode(bytes);
  if (/<!(DOCTYPE|ENTITY)/i.test(xml)) refuse('the XML declares a DTD or entities, which a report never has');
  const records = countRecords(xml);
  if (records > DMARC_LIMITS.records) refuse(`it has ${records} records, over ${DMARC_LIMITS.records}`);
  const valid = XMLValidator.validate(xml);
  if (valid !== true) refuse(`malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let tree: Node;
  try {
    tree = parser.parse(xml) as Node;
  } catch (error) {
    return refuse(`malformed XML: ${(error as Error).message}`);
  }
  const feedback = tree.feedback as Node | undefined;
  if (typeof feedback !== 'object' || feedback === null) return refuse('no <feedback> element: not a DMARC aggregate report');
  const metadata = feedback.report_metadata;
  const published = feedback.policy_published;
  const range = (metadata as Node | undefined)?.date_range;
  const domain = asciiDomain(required(published, 'domain', 'policy_published').replace(/\.$/, ''));
  if (!domain) refuse('<policy_published><domain> is not a domain name');
  const pct = text(published, 'pct');
  const report: AggregateReport = {
    org_name: required(metadata, 'org_name', 'report_metadata'),
    email: text(metadata, 'email') ?? null,
    report_id: required(metadata, 'report_id', 'report_metadata'),
    date_begin: whole(text(range, 'begin'), 'begin', 11) * 1000,
    date_end: whole(text(range, 'end'), 'end', 11) * 1000,
    domain: domain!,
    policy: {
      p: lower(text(published, 'p')) ?? null,
      sp: lower(text(published, 'sp')) ?? null,
      adkim: lower(text(published, 'adkim')) ?? null,
      aspf: lower(text(published, 'aspf')) ?? null,
      pct: pct !== undefined && /^\d{1,3}$/.test(pct) ? Number(pct) : null,
    },
    rows: ((feedback.record as unknown[] | undefined) ?? []).map(rowOf),
  };
  if (report.date_end < report.date_begin) refuse('its date range ends before it begins');
  return report;
}
