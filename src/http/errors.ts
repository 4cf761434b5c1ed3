// One error model. Domain code throws AppError(code, message); this table alone decides the HTTP status
// and the `name` Resend clients see. Every error body is {statusCode, name, message}.

const ERRORS = {
  missing_api_key: { status: 401 },
  restricted_api_key: { status: 401 },
  invalid_api_key: { status: 403 },
  missing_required_field: { status: 422 },
  validation_error: { status: 422 },
  invalid_parameter: { status: 422 },
  invalid_attachment: { status: 422 },
  invalid_access: { status: 422 },
  invalid_region: { status: 422 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  invalid_idempotency_key: { status: 400 },
  invalid_idempotent_request: { status: 409 },
  concurrent_idempotent_requests: { status: 409 },
  rate_limit_exceeded: { status: 429 },
  internal_server_error: { status: 500 },
  // Resend answers these with `validation_error` under other statuses.
  malformed_request: { status: 400, name: 'validation_error' },
  forbidden: { status: 403, name: 'validation_error' },
  payload_too_large: { status: 413, name: 'validation_error' },
  unsupported_media_type: { status: 415, name: 'validation_error' },
} as const satisfies Record<string, { status: number; name?: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorBody {
  statusCode: number;
  name: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  toBody(): ErrorBody {
    const entry: { status: number; name?: string } = ERRORS[this.code];
    return { statusCode: entry.status, name: entry.name ?? this.code, message: this.message };
  }
}

/** `Missing \`to\` field.` in Resend's words. */
export function missingField(field: string): AppError {
  return new AppError('missing_required_field', `Missing \`${field}\` field.`);
}

/** A field that is present but wrong, named the way the client wrote it. */
export function invalidField(field: string, why: string): AppError {
  return new AppError('validation_error', `Invalid \`${field}\` field: ${why}`);
}

/** How an error message shows a value the client sent: quoted, and cut short, so a huge value is never echoed whole. */
export function quoted(value: string): string {
  return `"${value.length > QUOTED_MAX ? `${value.slice(0, QUOTED_MAX)}…` : value}"`;
}

const QUOTED_MAX = 100;

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}
