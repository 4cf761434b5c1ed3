// Bounce and complaint reports as mail servers write them, built with nodemailer: an RFC 3464
// delivery status notification and an RFC 5965 ARF feedback report, each a multipart/report.
import MailComposer from 'nodemailer/lib/mail-composer/index.js';

export interface DsnFields {
  recipient: string;
  action: string;
  status?: string;
  diagnostic?: string;
}

/** Builds a multipart/report of `reportType`: a human part, the report part, the original's headers. */
async function report(to: string, reportType: string, part: { contentType: string; content: string }, originalMessageId: string): Promise<Buffer> {
  const mail = new MailComposer({
    from: 'MAILER-DAEMON@relay.test',
    to,
    subject: reportType === 'feedback-report' ? 'Complaint about message' : 'Undelivered Mail Returned to Sender',
    text: 'This is an automatically generated report.',
    attachments: [
      { ...part, contentDisposition: 'inline' },
      { contentType: 'text/rfc822-headers', content: `From: Acme <news@example.com>\r\nSubject: Hello\r\nMessage-ID: ${originalMessageId}\r\n`, contentDisposition: 'inline' },
    ],
  });
  const built = mail.compile();
  built.setHeader('Content-Type', `multipart/report; report-type=${reportType}`);
  return built.build();
}

/** A DSN to `to` with one block per recipient. */
export function dsn(to: string, originalMessageId: string, recipients: DsnFields[]): Promise<Buffer> {
  const blocks = recipients.map((r) =>
    [`Final-Recipient: rfc822; ${r.recipient}`, `Action: ${r.action}`, ...(r.status ? [`Status: ${r.status}`] : []), ...(r.diagnostic ? [`Diagnostic-Code: ${r.diagnostic}`] : [])].join('\r\n'),
  );
  const content = ['Reporting-MTA: dns; relay.test', ...blocks].join('\r\n\r\n') + '\r\n';
  return report(to, 'delivery-status', { contentType: 'message/delivery-status', content }, originalMessageId);
}

/** An ARF abuse report to `to` about `recipient`'s copy. */
export function arf(to: string, originalMessageId: string, recipient: string): Promise<Buffer> {
  const content = ['Feedback-Type: abuse', 'User-Agent: TestISP/1.0', 'Version: 1', `Original-Rcpt-To: ${recipient}`].join('\r\n') + '\r\n';
  return report(to, 'feedback-report', { contentType: 'message/feedback-report', content }, originalMessageId);
}
