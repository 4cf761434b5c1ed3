import nodemailer from 'nodemailer';
import { toTimestamp, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { saveCapturedMessage } from '../store/emails.ts';

export interface OutgoingMessage {
  emailId: string;
  from: string;
  to: string[];
  raw: Buffer;
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

export interface Transport {
  readonly kind: 'capture' | 'relay';
  send(message: OutgoingMessage): Promise<SendResult>;
  close(): void;
}

/** Nothing leaves the machine: the raw message is stored, and every recipient counts as accepted. */
function captureTransport(db: Db, clock: Clock): Transport {
  return {
    kind: 'capture',
    async send(message) {
      await saveCapturedMessage(db, message.emailId, message.raw, toTimestamp(clock.now()));
      return { accepted: message.to, rejected: [], response: '250 2.0.0 Captured by Mailroom (capture mode)' };
    },
    close() {},
  };
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

// Pooled connections by default; any of nodemailer's SMTP options can be set in SMTP_URL's query
// (`?maxConnections=20&tls.rejectUnauthorized=false`). The timeouts stay below the worker's lock
// timeout, so a hung relay frees its job for a retry.
const RELAY_DEFAULTS = {
  pool: 'true',
  maxConnections: '10',
  maxMessages: 'Infinity',
  connectionTimeout: '30000',
  greetingTimeout: '30000',
  socketTimeout: '60000',
};

/** Everything goes through one SMTP relay (SMTP_URL); STARTTLS is used whenever the relay offers it. */
function relayTransport(smtpUrl: string): Transport {
  const url = new URL(smtpUrl);
  for (const [name, value] of Object.entries(RELAY_DEFAULTS)) {
    if (!url.searchParams.has(name)) url.searchParams.set(name, value);
  }
  const pool = nodemailer.createTransport(url.toString());
  return {
    kind: 'relay',
    async send(message) {
      try {
        const info = await pool.sendMail({ envelope: { from: message.from, to: message.to }, raw: message.raw });
        const rejectedErrors: SmtpError[] = (info as { rejectedErrors?: SmtpError[] }).rejectedErrors ?? [];
        return { accepted: info.accepted.map(String), rejected: rejectedErrors.map(rejection), response: info.response };
      } catch (error) {
        const smtpError = error as SmtpError;
        // Every recipient refused at RCPT: report each refusal rather than one failure.
        if (smtpError.code === 'EENVELOPE' && smtpError.rejectedErrors?.length) {
          return { accepted: [], rejected: smtpError.rejectedErrors.map(rejection), response: smtpError.response ?? '' };
        }
        throw new DeliveryError(smtpError.response ?? smtpError.message, smtpError.responseCode);
      }
    },
    close: () => pool.close(),
  };
}

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

/** The relay when SMTP_URL is set; capture mode otherwise, so a new install never sends by accident. */
export function createTransport(config: Config, db: Db, clock: Clock): Transport {
  return config.smtpUrl ? relayTransport(config.smtpUrl) : captureTransport(db, clock);
}
