import { readFileSync } from 'node:fs';
import type { Context } from '../../context.ts';
import { HttpsFailure, httpsRequest } from '../../delivery/https-request.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import { REPORT_TYPE } from './send-reports.ts';

const POST_TIMEOUT_MS = 30_000;

/** The `post-tls-report` task: POSTs a report to a domain's https: address (RFC 8460 5.2); a refusal or failure is retried. */
export async function postReport(ctx: Context, attempt: Attempt<'post-tls-report'>): Promise<TaskResult> {
  const { url, report } = attempt.payload;
  const { outboundCaFile, mtaSts } = ctx.config;
  try {
    const { status } = await httpsRequest(new URL(url), {
      method: 'POST',
      headers: { 'content-type': REPORT_TYPE },
      body: Buffer.from(report, 'base64'),
      ca: outboundCaFile ? readFileSync(outboundCaFile, 'utf8') : undefined,
      resolver: ctx.dns,
      allowPrivate: mtaSts.allowPrivate,
      timeoutMs: POST_TIMEOUT_MS,
      maxBytes: 64 * 1024,
    });
    return status >= 200 && status < 300 ? done() : { ending: { end: 'retry', error: `${new URL(url).host} answered ${status}` } };
  } catch (error) {
    if (!(error instanceof HttpsFailure)) throw error;
    return { ending: { end: 'retry', error: error.message } };
  }
}
