// DMARC aggregate reports as receivers write them (RFC 7489, appendix C), and the files they mail them
// in: XML, gzip (node:zlib) and zip (fflate), and the hostile kinds a report address may get.
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import type Mail from 'nodemailer/lib/mailer';
import { sendTo } from './inbound.ts';

export interface ReportRowInput {
  ip: string;
  count: number;
  /** The policy's evaluation: aligned and passing. */
  dkimAligned?: boolean;
  spfAligned?: boolean;
  disposition?: string;
}

export interface ReportInput {
  org?: string;
  reportId: string;
  domain: string;
  /** Epoch ms. */
  begin: number;
  end: number;
  rows: ReportRowInput[];
}

const verdict = (pass: boolean | undefined) => (pass ? 'pass' : 'fail');

/** The XML of an aggregate report, as Google's and Yahoo's look. */
export function aggregateXml(input: ReportInput): string {
  const records = input.rows.map(
    (row) => `  <record>
    <row>
      <source_ip>${row.ip}</source_ip>
      <count>${row.count}</count>
      <policy_evaluated><disposition>${row.disposition ?? 'none'}</disposition><dkim>${verdict(row.dkimAligned)}</dkim><spf>${verdict(row.spfAligned)}</spf></policy_evaluated>
    </row>
    <identifiers><header_from>${input.domain}</header_from></identifiers>
    <auth_results>
      <dkim><domain>${row.dkimAligned ? input.domain : 'other.example'}</domain><selector>s1</selector><result>${verdict(row.dkimAligned)}</result></dkim>
      <spf><domain>${row.spfAligned ? `send.${input.domain}` : 'other.example'}</domain><scope>mfrom</scope><result>${verdict(row.spfAligned)}</result></spf>
    </auth_results>
  </record>`,
  );
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${input.org ?? 'google.com'}</org_name>
    <email>noreply-dmarc-support@google.com</email>
    <report_id>${input.reportId}</report_id>
    <date_range><begin>${Math.floor(input.begin / 1000)}</begin><end>${Math.floor(input.end / 1000)}</end></date_range>
  </report_metadata>
  <policy_published><domain>${input.domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>
${records.join('\n')}
</feedback>
`;
}

/** Mails `attachments` to `to` through the inbound server on `port`, as a reporter does: the server's answer, or its refusal. */
export async function mailReports(port: number, to: string, attachments: Mail.Attachment[]): Promise<{ code: number; response: string }> {
  try {
    const sent = await sendTo(port, { from: 'noreply-dmarc-support@google.com', to, subject: `Report domain: ${to.split('@')[1]}`, text: 'A DMARC report.', attachments });
    return { code: 250, response: sent.response };
  } catch (error) {
    const { responseCode, response } = error as { responseCode: number; response: string };
    return { code: responseCode, response };
  }
}

export const gzipped = (xml: string | Uint8Array) => gzipSync(xml);

export const zipped = (files: Record<string, string | Uint8Array>) =>
  Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, content]) => [name, typeof content === 'string' ? Buffer.from(content) : content]))));

/** A gzip file of `bytes` zeros whose trailer declares 1 KB: only the bytes really inflated can stop it. */
export function lyingGzipBomb(bytes: number): Buffer {
  const bomb = gzipped(new Uint8Array(bytes));
  bomb.writeUInt32LE(1024, bomb.length - 4);
  return bomb;
}

/** The billion laughs: ten levels of entities, each ten of the one below. */
export function billionLaughs(domain: string): string {
  const entities = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`)];
  return `<?xml version="1.0"?>\n<!DOCTYPE feedback [${entities.join('')}]>\n<feedback><report_metadata><org_name>&lol9;</org_name></report_metadata><policy_published><domain>${domain}</domain></policy_published></feedback>`;
}

/** A report whose org_name is an external entity at `url`. */
export function externalEntity(url: string, input: ReportInput): string {
  return aggregateXml({ ...input, org: '&xxe;' }).replace('<?xml version="1.0" encoding="UTF-8" ?>', `<?xml version="1.0"?>\n<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "${url}">]>`);
}

/** A report of `rows` records, each as small as a record can be. */
export function manyRows(input: Omit<ReportInput, 'rows'>, rows: number): string {
  const record = '<record><row><source_ip>192.0.2.1</source_ip><count>1</count></row><identifiers><header_from>x</header_from></identifiers></record>';
  return aggregateXml({ ...input, rows: [] }).replace('</feedback>', `${record.repeat(rows)}</feedback>`);
}
