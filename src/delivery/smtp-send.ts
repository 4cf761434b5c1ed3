// One SMTP transaction and what came of it, shared by the relay and direct transports.

/** Below the worker's lock timeout, so a hung server frees its job for a retry. */
export const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/** A nodemailer transport (pooled or not), as far as one transaction needs it. */
export interface SmtpSender {
  sendMail(mail: { envelope: { from: string; to: string[] }; raw: Buffer }): Promise<{ accepted: unknown[]; response: string }>;
}

export interface Rejection {
  address: string;
  code: number | undefined;
  response: string;
}

/** What the receiving server said: recipients it took, and those it refused (with its reply). */
export interface SendResult {
  accepted: string[];
  rejected: Rejection[];
  response: string;
}

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  recipient?: string;
  rejectedErrors?: SmtpError[];
}

const rejection = (error: SmtpError): Rejection => ({
  address: error.recipient ?? '',
  code: error.responseCode,
  response: error.response ?? error.message,
});

/** A failure of the whole message (connection, MAIL FROM, DATA); `code` is the SMTP reply code if any. */
export class DeliveryError extends Error {
  constructor(
    readonly response: string,
    readonly code: number | undefined,
  ) {
    super(response);
  }

  /** 5xx is final; 4xx and a lost connection are worth another try. */
  get permanent(): boolean {
    return this.code !== undefined && this.code >= 500;
  }
}

/**
 * One SMTP transaction through a nodemailer transport: what the server said of each recipient, or a
 * DeliveryError when the whole message failed (connection, MAIL FROM, DATA).
 */
export async function sendVia(transport: SmtpSender, envelope: { from: string; to: string[] }, raw: Buffer): Promise<SendResult> {
  try {
    const info = await transport.sendMail({ envelope, raw });
    const rejectedErrors: SmtpError[] = (info as { rejectedErrors?: SmtpError[] }).rejectedErrors ?? [];
    return { accepted: info.accepted.map(String), rejected: rejectedErrors.map(rejection), response: info.response };
  } catch (error) {
    const smtpError = error as SmtpError;
    // Every recipient refused at RCPT: report each refusal rather than one failure.
    if (smtpError.code === 'EENVELOPE' && smtpError.rejectedErrors?.length) {
      return { accepted: [], rejected: smtpError.rejectedErrors.map(rejection), response: smtpError.response ?? '' };
    }
    // STARTTLS that fails where TLS is required is the connection's failure, not a refusal of the
    // message: worth another server or another try, whatever the server replied.
    if (smtpError.code === 'ETLS') throw new DeliveryError(`${smtpError.message}: ${smtpError.response ?? ''}`, undefined);
    throw new DeliveryError(smtpError.response ?? smtpError.message, smtpError.responseCode);
  }
}
