import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import type { SendEmailInput } from './email-input.ts';
import { prepareEmail, type PreparedEmail } from './email-input.ts';
import { storeEmails, type SendHeaders } from './emails.ts';
import type { SenderKey } from '../sending-domains/sender-domain.ts';
import { runIdempotent, type IdempotentRequest } from './idempotency.ts';

export const MAX_BATCH = 100;

export type BatchValidation = 'strict' | 'permissive';

/** One request entry: a payload that passed the schema, or the error it got there. */
export type BatchEntry = { value: SendEmailInput } | { error: AppError };

export interface BatchResult {
  data: { id: string }[];
  errors?: { index: number; message: string }[];
}

function atIndex(error: AppError, index: number): AppError {
  return new AppError(error.code, `Email at index ${index}: ${error.message}`);
}

async function prepareEntry(ctx: Context, entry: BatchEntry, index: number, key: SenderKey): Promise<PreparedEmail> {
  if ('error' in entry) throw atIndex(entry.error, index);
  const input = entry.value;
  if (input.attachments !== undefined) {
    throw atIndex(new AppError('validation_error', 'Attachments are not supported in batch emails.'), index);
  }
  if (input.scheduled_at !== undefined) {
    throw atIndex(new AppError('validation_error', 'Scheduling is not supported in batch emails.'), index);
  }
  try {
    return await prepareEmail(ctx, input, key);
  } catch (error) {
    throw error instanceof AppError ? atIndex(error, index) : error;
  }
}

/**
 * POST /emails/batch: every entry is checked as POST /emails checks it, and all accepted emails with
 * their jobs are committed in one transaction. Strict: the first invalid entry fails the request and
 * nothing is stored; `data[i]` answers entry i. Permissive: the valid entries are stored and each
 * invalid one is reported in `errors` with its index. `headers` gets the quota headers, as for POST /emails.
 */
export async function sendBatch(
  ctx: Context,
  entries: BatchEntry[],
  validation: BatchValidation,
  key: SenderKey,
  idempotent?: IdempotentRequest,
  headers: SendHeaders = {},
): Promise<BatchResult> {
  return runIdempotent(ctx, idempotent, async (record) => {
    const prepared: PreparedEmail[] = [];
    const errors: { index: number; message: string }[] = [];
    for (const [index, entry] of entries.entries()) {
      try {
        prepared.push(await prepareEntry(ctx, entry, index, key));
      } catch (error) {
        if (validation === 'strict' || !(error instanceof AppError)) throw error;
        errors.push({ index, message: error.message });
      }
    }
    const data = prepared.map((p) => ({ id: p.email.id }));
    const response: BatchResult = validation === 'strict' ? { data } : { data, errors };
    if (prepared.length > 0) Object.assign(headers, await storeEmails(ctx, prepared, record?.(response)));
    return response;
  });
}
