import { compile } from 'html-to-text';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { AttachmentRow, EmailRow } from '../store/emails.ts';

// An inline image (`cid:`) is part of the message, not a link a reader could follow: it reads as its
// alt text, or not at all, never "[cid:logo]". Other images keep html-to-text's "alt [url]".
const htmlToText = compile({
  wordwrap: 78,
  selectors: [{ selector: 'img[src^="cid:" i]', format: 'inlineImage' }],
  formatters: {
    inlineImage: (element, _walk, builder) => {
      const alt = (element.attribs as Record<string, string> | undefined)?.alt;
      if (alt) builder.addInline(alt, { noWordTransform: true });
    },
  },
});

/** The text part: as given, none when given as "", else generated from the html. */
export function textPart(html: string | null, text: string | null): string | undefined {
  if (text !== null) return text === '' ? undefined : text;
  return html === null ? undefined : htmlToText(html);
}

/**
 * Builds the MIME message of an email with nodemailer's MailComposer: html and text as alternatives,
 * inline attachments (with a Content-ID) beside the html in multipart/related, the others after.
 * The Message-ID comes from the email row, so every retry sends the same message. Bcc stays out of
 * the headers: it exists only in the envelope. `html`, when given, is sent in place of the email's
 * (a recipient's tracked html); the text part is still the email's own.
 */
export function composeMessage(email: EmailRow, attachments: AttachmentRow[], date: Date, html = email.html): Promise<Buffer> {
  const composer = new MailComposer({
    from: email.from,
    to: email.to,
    cc: email.cc,
    replyTo: email.reply_to,
    subject: email.subject,
    messageId: email.message_id,
    date,
    // Tags are the sender's private data (customer ids, plans): they stay in the database and events.
    headers: email.headers ?? {},
    html: html ?? undefined,
    text: textPart(email.html, email.text),
    attachments: attachments.map((a) => ({
      filename: a.filename ?? undefined,
      content: a.content,
      contentType: a.content_type ?? undefined,
      cid: a.content_id ?? undefined,
    })),
  });
  return new Promise((resolve, reject) => {
    composer.compile().build((error, message) => (error ? reject(error) : resolve(message)));
  });
}
