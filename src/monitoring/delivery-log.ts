import type { Logger } from 'pino';
import { domainOf } from '../domain/recipients/addresses.ts';

/** How often the summary of deliveries is logged, when there were any. */
const SUMMARY_EVERY_MS = 10_000;

export interface DeliveryLog {
  /** One recipient's outcome of one delivery attempt: a debug line now, and a count in the next summary. */
  record(attempt: { email: string; recipient: string; outcome: string; response: string | null; attempt: number }): void;
  /** Logs what is counted and stops. */
  close(): void;
}

/** The reply code at the start of an SMTP response, if it has one. */
const replyCode = (response: string | null) => (response ? Number(/^([2-5]\d\d)\b/.exec(response)?.[1]) || undefined : undefined);

/**
 * Delivery attempts are logged one line each at `debug`, and summed up at `info` every ten seconds:
 * how many recipients were delivered, delayed, bounced and failed, and the reply that came most often
 * for the ones not delivered. At thousands of emails a second `info` stays readable, and a relay that
 * refuses every attempt shows within ten seconds, with its reason.
 */
export function createDeliveryLog(log: Logger): DeliveryLog {
  let counts: Record<string, number> = {};
  let replies = new Map<string, number>();
  const summarize = () => {
    if (Object.keys(counts).length === 0) return;
    const [reply] = [...replies].sort((a, b) => b[1] - a[1])[0] ?? [];
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    log.info({ ...counts, seconds: SUMMARY_EVERY_MS / 1000, top_reply: reply }, `${total} delivery outcomes in the last ${SUMMARY_EVERY_MS / 1000} s`);
    counts = {};
    replies = new Map();
  };
  const timer = setInterval(summarize, SUMMARY_EVERY_MS);
  timer.unref();
  return {
    record({ email, recipient, outcome, response, attempt }) {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      if (outcome !== 'delivered' && response) {
        const reply = response.slice(0, 200);
        replies.set(reply, (replies.get(reply) ?? 0) + 1);
      }
      log.debug({ email, domain: domainOf(recipient), outcome, code: replyCode(response), response, attempt }, 'delivery attempt');
    },
    close() {
      clearInterval(timer);
      summarize();
    },
  };
}
