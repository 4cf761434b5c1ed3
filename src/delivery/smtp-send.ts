import { tlsFailureOf, type TlsFailureType } from './tls-results.ts';

// One SMTP transaction and what came of it, shared by the relay and direct transports.

/** The domain of a recipient's address, lower-cased: what its mail servers and its throttle are found by. */
export const recipientDomain = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** The recipients of each domain, with their positions in `addresses`. */
export function byDomain(addresses: string[]): Map<string, { to: string[]; positions: number[] }> {
  const groups = new Map<string, { to: string[]; positions: number[] }>();
  for (const [position, address] of addresses.entries()) {
    const domain = recipientDomain(address);
    const group = groups.get(domain) ?? { to: [], positions: [] };
    group.to.push(address);
    group.positions.push(position);
    groups.set(domain, group);
  }
  return groups;
}

/**
 * The Message-ID nodemailer is given for a raw message, which it sends as it is (its own Message-ID in
 * it): without one, nodemailer makes one up from random bytes for every send, only to echo it back.
 */
const UNREAD_MESSAGE_ID = '<raw@mailroom>';

/** Below the worker's lock timeout, so a hung server frees its job for a retry. */
export const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/** A nodemailer transport (pooled or not), as far as one transaction needs it. */
export interface SmtpSender {
  sendMail(mail: { envelope: { from: string; to: string[] }; raw: Buffer; messageId?: string; signal?: AbortSignal }): Promise<{ accepted: unknown[]; response: string }>;
}

/** What nodemailer's sendMail answers: the envelope as it wrote it, and the server's replies. */
interface SentInfo {
  envelope?: { to: string[] };
  accepted: unknown[];
  rejectedErrors?: SmtpError[];
  response: string;
}

/**
 * The command a server's answer came to: the connection (greeting, EHLO, STARTTLS, or none at all),
 * AUTH, MAIL FROM, RCPT TO or DATA. Whom a refusal is about follows from it (domain/outcomes).
 */
export type SmtpStage = 'connection' | 'auth' | 'mail' | 'rcpt' | 'data';

/** The stage of nodemailer's `command` ('AUTH PLAIN', 'MAIL FROM', 'RCPT TO', 'DATA', 'CONN', 'API'). */
function stageOf(command: string | undefined): SmtpStage {
  if (command?.startsWith('AUTH')) return 'auth';
  if (command === 'MAIL FROM') return 'mail';
  if (command === 'RCPT TO') return 'rcpt';
  if (command === 'DATA') return 'data';
  return 'connection';
}

/** What the receiving server said of one recipient: taken, or refused with its reply. */
export interface RecipientResult {
  accepted: boolean;
  code: number | undefined;
  response: string;
  /** The command a refusal answered. */
  stage?: SmtpStage;
  /** Not sent: its destination's budget (throttle.ts) has a slot for it at this time (epoch ms). */
  throttledUntil?: number;
  /** Not sent: its server cannot be reached, and is paused until this time (breaker.ts). */
  pausedUntil?: number;
}

/** What the server said of each recipient, in the order of the envelope's `to`, and of the message. */
export interface SendResult {
  recipients: RecipientResult[];
  response: string;
}

interface SmtpError extends Error {
  code?: string;
  originalCode?: string;
  command?: string;
  responseCode?: number;
  response?: string;
  recipient?: string;
  rejectedErrors?: SmtpError[];
}

const refusal = (error: SmtpError): RecipientResult => ({ accepted: false, code: error.responseCode, response: error.response ?? error.message, stage: stageOf(error.command) });

/** The same result for every recipient of `to`. */
export function resultForAll(to: string[], result: RecipientResult): SendResult {
  return { recipients: to.map(() => result), response: result.response };
}

/** Every recipient of `to` refused by `error`, the whole transaction's failure. */
export const refusedAll = (to: string[], error: DeliveryError): SendResult =>
  resultForAll(to, { accepted: false, code: error.code, response: error.response, stage: error.stage });

/**
 * Each recipient's result, by position. nodemailer parses the envelope's addresses and may write one
 * differently on the wire (a quoted local part), and reports what the server said of each as it wrote
 * it; its envelope lists the addresses as written, in our order, so the i-th written address stands for
 * our i-th recipient.
 */
function byPosition(to: string[], written: string[], accepted: string[], refusals: SmtpError[], response: string): RecipientResult[] {
  const wire = written.length === to.length ? written : to;
  const taken = new Map<string, number>();
  for (const address of accepted) taken.set(address, (taken.get(address) ?? 0) + 1);
  const refused = [...refusals];
  return wire.map((address) => {
    const count = taken.get(address) ?? 0;
    if (count > 0) {
      taken.set(address, count - 1);
      return { accepted: true, code: undefined, response };
    }
    const index = refused.findIndex((error) => error.recipient === address);
    const error = index === -1 ? undefined : refused.splice(index, 1)[0]!;
    return error ? refusal(error) : { accepted: false, code: undefined, response: `No answer for this recipient: ${response}` };
  });
}

/** A failure of the whole message (connection, AUTH, MAIL FROM, DATA); `code` is the SMTP reply code if any, `stage` the command it answered. */
export class DeliveryError extends Error {
  constructor(
    readonly response: string,
    readonly code: number | undefined,
    readonly stage: SmtpStage = 'connection',
    /** A TLS failure (a certificate refused, STARTTLS refused where required): what TLS reports count. */
    readonly tls?: { type: TlsFailureType; reason: string },
  ) {
    super(response);
  }

  /** 5xx is final (RFC 5321): no other server of the destination is tried; 4xx and a lost connection are worth another try. */
  get permanent(): boolean {
    return this.code !== undefined && this.code >= 500;
  }
}

/**
 * One SMTP transaction through a nodemailer transport: what the server said of each recipient, or a
 * DeliveryError when the whole message failed (connection, MAIL FROM, DATA). When `signal` aborts,
 * nodemailer closes the connection mid-transaction and this rethrows its error as it is.
 */
export async function sendVia(transport: SmtpSender, envelope: { from: string; to: string[] }, raw: Buffer, signal?: AbortSignal): Promise<SendResult> {
  try {
    const info = (await transport.sendMail({ envelope, raw, messageId: UNREAD_MESSAGE_ID, signal })) as SentInfo;
    const written = info.envelope?.to ?? envelope.to;
    return { recipients: byPosition(envelope.to, written, info.accepted.map(String), info.rejectedErrors ?? [], info.response), response: info.response };
  } catch (error) {
    if (signal?.aborted) throw error; // not the server's answer: nothing to report of the recipients
    const smtpError = error as SmtpError;
    // Every recipient refused at RCPT: report each refusal, in the order they were sent.
    if (smtpError.code === 'EENVELOPE' && smtpError.rejectedErrors?.length) {
      const refusals = smtpError.rejectedErrors;
      const written = refusals.length === envelope.to.length ? refusals.map((e) => e.recipient ?? '') : envelope.to;
      return { recipients: byPosition(envelope.to, written, [], refusals, smtpError.response ?? ''), response: smtpError.response ?? '' };
    }
    // STARTTLS that fails where TLS is required is the connection's failure, not a refusal of the
    // message: worth another server or another try, whatever the server replied.
    const tls = tlsFailureOf(smtpError);
    if (smtpError.code === 'ETLS') throw new DeliveryError(`${smtpError.message}: ${smtpError.response ?? ''}`, undefined, 'connection', tls);
    throw new DeliveryError(smtpError.response ?? smtpError.message, tls ? undefined : smtpError.responseCode, stageOf(smtpError.command), tls);
  }
}
