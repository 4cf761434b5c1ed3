import MimeNode from 'nodemailer/lib/mime-node';

// A TLS report as RFC 8460 5.3 mails it: multipart/report with report-type=tlsrpt, a text part for
// people, then the gzip JSON (application/tlsrpt+gzip), and the TLS-Report-Domain and
// TLS-Report-Submitter headers. Sent as its own source (as a message submitted over SMTP is), since
// the composer of ordinary emails makes multipart/mixed.

export interface ReportMessage {
  from: string;
  to: string[];
  subject: string;
  messageId: string;
  date: Date;
  domain: string;
  submitter: string;
  text: string;
  filename: string;
  gzipped: Buffer;
}

export function reportMessage(m: ReportMessage): Promise<Buffer> {
  const root = new MimeNode('multipart/report');
  root.setHeader({
    'Content-Type': 'multipart/report; report-type=tlsrpt',
    From: m.from,
    To: m.to.join(', '),
    Subject: m.subject,
    'Message-ID': m.messageId,
    Date: m.date,
    'TLS-Report-Domain': m.domain,
    'TLS-Report-Submitter': m.submitter,
  });
  root.createChild('text/plain; charset=utf-8').setContent(m.text);
  root.createChild('application/tlsrpt+gzip', { filename: m.filename }).setHeader('Content-Disposition', 'attachment').setContent(m.gzipped);
  return new Promise((resolve, reject) => root.build((error, message) => (error ? reject(error) : resolve(message))));
}
