// The API's request logs, written off the request path. The HTTP edge records each request as a few
// references (http/api-logs.ts); a flusher turns them into rows (ids, redacted bodies) every FLUSH_MS,
// or at once when FLUSH_ROWS wait, and writes them in one transaction through the writer, one batch at
// a time. Logs are not acknowledged data: a kill -9 loses what waits in memory (the last FLUSH_MS of
// requests, more if the database is behind), and when the database falls behind the oldest rows
// waiting are dropped, with a warning that counts them. A graceful stop writes everything.
import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { newIdAt } from '../../time/ids.ts';
import { faultOf } from '../../store/availability.ts';
import type { ApiLogTable } from '../../store/schema.ts';
import { redactedJson, redactedText } from './redact.ts';

/** One request as the edge saw it: references only, nothing serialized. */
export interface RequestLogEntry {
  /** ctx.clock's time when it was answered. */
  at: number;
  method: string;
  /** As called, query string and all. */
  url: string;
  status: number;
  userAgent: string | undefined;
  apiKeyId: string | null;
  /** The project of that key: the one whose logs show the request. */
  projectId: string;
  durationMs: number;
  /** The JSON body as sent, when it is no longer than the body limit: kept unparsed if it names no secret. */
  bodyText: string | undefined;
  /** Else the body as parsed, if any: a long one is walked only as far as the limit. */
  body: unknown;
  /** The answer as serialized, when it is JSON (a stream, a buffer or text is not kept). */
  payload: string | undefined;
}

export interface RequestLogs {
  record(entry: RequestLogEntry): void;
  /** Writes what waits, then records nothing more. */
  close(): Promise<void>;
}

export const FLUSH_MS = 200;
export const FLUSH_ROWS = 500;
/** The rows waiting for the database, by the size of their bodies, past which the oldest are dropped. */
const MAX_WAITING_BYTES = 32 * 1024 * 1024;
/** A row's size besides its bodies, for that count. */
const ROW_BYTES = 200;
const WARN_EVERY_MS = 10_000;
/** While the database is away, a batch that could not be written is tried again this much later. */
const RETRY_MS = 1000;
const MAX_USER_AGENT = 512;
const MAX_ENDPOINT = 2048;

const weight = (row: ApiLogTable) => ROW_BYTES + (row.request_body?.length ?? 0) + (row.response_body?.length ?? 0);

function requestBody(entry: RequestLogEntry, limit: number): string | null {
  if (entry.bodyText !== undefined) return redactedText(entry.bodyText, limit);
  return entry.body === undefined || entry.body === null ? null : redactedJson(entry.body, limit);
}

/** A log row: the body limit is MAILROOM_LOG_BODY_BYTES, 0 keeping no bodies. */
function rowOf(entry: RequestLogEntry, limit: number): ApiLogTable {
  const query = entry.url.indexOf('?');
  const path = query === -1 ? entry.url : entry.url.slice(0, query);
  const keep = limit > 0;
  return {
    // Of the clock's time, so that retention removes old logs by a range of ids.
    id: newIdAt(entry.at),
    project_id: entry.projectId,
    created_at: toTimestamp(entry.at),
    method: entry.method,
    endpoint: path.slice(0, MAX_ENDPOINT),
    response_status: entry.status,
    user_agent: entry.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
    api_key_id: entry.apiKeyId,
    duration_ms: Math.round(entry.durationMs),
    request_body: keep ? requestBody(entry, limit) : null,
    response_body: keep && entry.payload !== undefined ? redactedText(entry.payload, limit) : null,
  };
}

/** The buffer and its flusher, for one API process. */
export function createRequestLogs(ctx: Pick<Context, 'writer' | 'log' | 'config'>): RequestLogs {
  const limit = ctx.config.apiLogs.bodyBytes;
  let entries: RequestLogEntry[] = [];
  const rows: ApiLogTable[] = [];
  let waitingBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon = false;
  let writing: Promise<void> | undefined;
  let closed = false;
  let dropped = 0;
  let warnedAt = 0;

  const warnDropped = (force: boolean) => {
    if (dropped === 0 || (!force && Date.now() - warnedAt < WARN_EVERY_MS)) return;
    ctx.log.warn({ dropped }, 'API request logs dropped: the database did not keep up');
    dropped = 0;
    warnedAt = Date.now();
  };

  // Turns the entries into rows, which lets go of their bodies; past the bound, the oldest rows go.
  const prepare = () => {
    const batch = entries;
    entries = [];
    for (const entry of batch) {
      try {
        const row = rowOf(entry, limit);
        rows.push(row);
        waitingBytes += weight(row);
      } catch (err) {
        ctx.log.error({ err }, 'an API request log could not be made');
      }
    }
    while (waitingBytes > MAX_WAITING_BYTES && rows.length > 0) {
      waitingBytes -= weight(rows.shift()!);
      dropped++;
    }
    warnDropped(false);
  };

  const write = () => {
    if (writing || rows.length === 0) return;
    const batch = rows.splice(0, FLUSH_ROWS);
    for (const row of batch) waitingBytes -= weight(row);
    let retry = false;
    writing = ctx.writer
      .insert({ api_logs: batch })
      .catch((err: unknown) => {
        // The database away (logged once, by ctx.availability): the batch waits, within the bound, for its return.
        if (!faultOf(err)) return ctx.log.error({ err, lost: batch.length }, 'API request logs could not be written');
        rows.unshift(...batch);
        for (const row of batch) waitingBytes += weight(row);
        retry = true;
      })
      .finally(() => {
        writing = undefined;
        if (!retry) write();
        else if (!closed && timer === undefined) timer = setTimeout(tick, RETRY_MS).unref();
      });
  };

  const tick = () => {
    clearTimeout(timer);
    timer = undefined;
    soon = false;
    prepare();
    write();
  };

  return {
    record(entry) {
      if (closed) return;
      entries.push(entry);
      if (entries.length >= FLUSH_ROWS && !soon) {
        soon = true;
        setImmediate(tick);
      } else if (timer === undefined && !soon) {
        // Unref'd: a stop writes what waits (close), and a pending flush must not keep a process alive.
        timer = setTimeout(tick, FLUSH_MS).unref();
      }
    },
    async close() {
      closed = true;
      tick();
      while (writing) await writing;
      warnDropped(true);
    },
  };
}
