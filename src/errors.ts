// One error model for every edge. Domain code throws AppError(code, message); this table alone decides
// the HTTP status and the `name` Resend clients see ({statusCode, name, message}), and the SMTP reply
// an SMTP edge answers with (code and enhanced status, RFC 5321 and RFC 3463).

interface ErrorKind {
  status: number;
  /** Resend's `name`, when it is not the code itself. */
  name?: string;
  /** The SMTP reply code and enhanced status code. */
  smtp: readonly [number, string];
  /** Seconds a client should wait before trying again (Retry-After), for a condition that passes. */
  retryAfter?: number;
}

/** A request that is not right as written: permanent, and about the message. */
const INVALID = [554, '5.6.0'] as const;

const ERRORS = {
  missing_api_key: { status: 401, smtp: [530, '5.7.0'] },
  restricted_api_key: { status: 401, smtp: [550, '5.7.1'] },
  invalid_api_key: { status: 403, smtp: [535, '5.7.8'] },
  // A provider's notification (POST /feedback/...) without its signature or credentials, or with wrong ones.
  missing_signature: { status: 401, smtp: [530, '5.7.0'] },
  invalid_signature: { status: 403, smtp: [535, '5.7.8'] },
  missing_required_field: { status: 422, smtp: INVALID },
  validation_error: { status: 422, smtp: INVALID },
  invalid_parameter: { status: 422, smtp: INVALID },
  invalid_attachment: { status: 422, smtp: INVALID },
  invalid_access: { status: 422, smtp: INVALID },
  invalid_region: { status: 422, smtp: INVALID },
  not_found: { status: 404, smtp: INVALID },
  // A project that still has domains or keys, deleted without ?force=true.
  project_not_empty: { status: 409, smtp: INVALID },
  method_not_allowed: { status: 405, smtp: [502, '5.5.1'] },
  invalid_idempotency_key: { status: 400, smtp: INVALID },
  invalid_idempotent_request: { status: 409, smtp: INVALID },
  concurrent_idempotent_requests: { status: 409, smtp: [451, '4.7.0'] },
  rate_limit_exceeded: { status: 429, smtp: [451, '4.7.1'] },
  // A project's quotas (domain/projects/quotas.ts). Over SMTP a day's passes by midnight UTC, within a
  // client's retries: 4xx keeps the message queued; a month's is 5xx, so the sender hears now.
  daily_quota_exceeded: { status: 429, smtp: [451, '4.7.1'] },
  monthly_quota_exceeded: { status: 429, smtp: [550, '5.7.1'] },
  internal_server_error: { status: 500, smtp: [451, '4.3.0'] },
  // The database cannot be reached or takes no writes (store/availability.ts): a pause, never a loss.
  service_unavailable: { status: 503, smtp: [451, '4.3.0'], retryAfter: 5 },
  // Resend has no such answer; WebDAV's 507 and SMTP's 452 4.3.1 say it: the disk is full.
  insufficient_storage: { status: 507, smtp: [452, '4.3.1'], retryAfter: 60 },
  // Resend answers these with `validation_error` under other statuses.
  malformed_request: { status: 400, name: 'validation_error', smtp: [501, '5.5.4'] },
  forbidden: { status: 403, name: 'validation_error', smtp: [550, '5.7.1'] },
  payload_too_large: { status: 413, name: 'validation_error', smtp: [552, '5.3.4'] },
  unsupported_media_type: { status: 415, name: 'validation_error', smtp: INVALID },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERRORS;

/** Whether `code` is one of ours: an AppError thrown on a thread comes back as its code and message. */
export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(ERRORS, code);

export interface ErrorBody {
  statusCode: number;
  name: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** HTTP headers the answer carries (a quota's `x-resend-daily-quota`, its `retry-after`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  /** Seconds to wait before trying again, for the errors of a condition that passes. */
  get retryAfter(): number | undefined {
    return (ERRORS[this.code] as ErrorKind).retryAfter;
  }

  toBody(): ErrorBody {
    const entry: ErrorKind = ERRORS[this.code];
    return { statusCode: entry.status, name: entry.name ?? this.code, message: this.message };
  }

  /** The SMTP reply for this error: `554 5.6.0 <message>`, the message on one line. */
  toSmtpReply(): { code: number; message: string } {
    const [code, enhanced] = ERRORS[this.code].smtp;
    return { code, message: `${enhanced} ${this.message.replace(/[\r\n]+/g, ' ')}` };
  }
}

/** `Missing \`to\` field.` in Resend's words. */
export function missingField(field: string): AppError {
  return new AppError('missing_required_field', `Missing \`${clip(field)}\` field.`);
}

/** A field that is present but wrong, named the way the client wrote it (a name of the client's own, a header's say, clipped). */
export function invalidField(field: string, why: string): AppError {
  return new AppError('validation_error', `Invalid \`${clip(field)}\` field: ${why}`);
}

/** A value the client sent as an error message shows it: cut at 100 characters, so a huge value is never echoed whole. */
export function clip(value: string): string {
  return value.length > CLIP_MAX ? `${value.slice(0, CLIP_MAX)}…` : value;
}

const CLIP_MAX = 100;

/** How an error message shows a value the client sent: quoted, and clipped. */
export function quoted(value: string): string {
  return `"${clip(value)}"`;
}

/** `Email not found`, in Resend's words. */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}
