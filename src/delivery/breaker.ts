import type { Clock } from '../time/clock.ts';
import { DeliveryError, resultForAll, type SendResult } from './smtp-send.ts';

// A server that cannot be reached (the relay down, a recipient's server refusing connections, never
// greeting, failing TLS, or answering 421 to everything), or that refuses us (a 5xx to our login or our
// envelope sender: a relay's setup that is wrong), is paused as a whole: after a few failures in a row
// nothing more is tried on it until a pause ends, then one message probes it. Each message would
// otherwise find out alone, a connection attempt apiece; paused, the messages wait for the probe.

/** Failures in a row that pause a server. */
const FAILURES_TO_PAUSE = 3;
const FIRST_PAUSE_MS = 5_000;
/** A pause doubles with each failed probe, up to this. */
const LONGEST_PAUSE_MS = 5 * 60_000;
/** How long the others wait while one message probes. */
const PROBE_WAIT_MS = 1_000;

export interface Breaker {
  /** When the server may be tried again (epoch ms), or undefined: now. At a pause's end, one caller is let through to probe. */
  pausedUntil(): number | undefined;
  /** The server answered (whatever it said of the message): it is reachable. */
  reached(): void;
  /** The server could not be reached, or refused us (`refused`); `reason` is what it said or what happened. */
  failed(reason: string, refused?: boolean): void;
  /** A send let through ended with no word of the server (the worker stopping): another may probe. */
  abandoned(): void;
  /** Why it is paused, for the messages that wait. */
  readonly reason: string;
  readonly paused: boolean;
}

/** Hears that a server was paused (`paused`: true) or can be reached again, in a sentence for the log. */
export type BreakerLog = (message: string, paused: boolean) => void;

/** A breaker for the server `name` (the relay, or a destination). */
export function createBreaker(name: string, clock: Clock, log: BreakerLog): Breaker {
  let failures = 0;
  let pause = 0;
  let until: number | undefined;
  let probing = false;
  let since = 0;
  let reason = '';
  let what = '';
  return {
    get reason() {
      return `Delivery to ${name} is paused: ${what} (${reason})`;
    },
    get paused() {
      return until !== undefined;
    },
    abandoned() {
      probing = false;
    },
    pausedUntil() {
      if (until === undefined) return undefined;
      const now = clock.now();
      if (now < until) return until;
      if (probing) return now + PROBE_WAIT_MS;
      probing = true;
      return undefined;
    },
    reached() {
      if (until !== undefined) log(`${name} can be reached again, after ${Math.round((clock.now() - since) / 1000)} s: delivery resumes`, false);
      [failures, pause, until, probing] = [0, 0, undefined, false];
    },
    failed(why, refused = false) {
      reason = why;
      what = refused ? 'it refuses our login or envelope sender' : 'it could not be reached';
      failures++;
      if (!probing && (until !== undefined || failures < FAILURES_TO_PAUSE)) return;
      if (until === undefined) {
        since = clock.now();
        const fact = refused ? 'refuses our login or envelope sender' : 'cannot be reached';
        log(`${name} ${fact} (${why}): delivery to it is paused, and tried again with one message at a time`, true);
      }
      pause = Math.min(pause === 0 ? FIRST_PAUSE_MS : pause * 2, LONGEST_PAUSE_MS);
      until = clock.now() + pause;
      probing = false;
    },
  };
}

/** Whether a failed transaction says the server cannot be reached: no answer at all (refused, silent, TLS failed), or 421 (closing the channel). */
export const unreachable = (error: DeliveryError): boolean => error.code === undefined || error.code === 421;

/** Whether a failed transaction is the server refusing us rather than a message: a 5xx to AUTH or MAIL FROM. */
export const refusesUs = (error: DeliveryError): boolean => error.permanent && (error.stage === 'auth' || error.stage === 'mail');

/** Every recipient of `to` not sent now: `breaker`'s server is paused until `until`. */
export function pausedAll(to: string[], breaker: Breaker, until: number): SendResult {
  return resultForAll(to, { accepted: false, code: undefined, response: breaker.reason, pausedUntil: until });
}

/**
 * `send` through `breaker`: nothing is tried while its server is paused; a transaction tells the breaker
 * whether it reached the server, could not, or was refused at AUTH or MAIL FROM.
 */
export async function guarded(breaker: Breaker, to: string[], send: () => Promise<SendResult>): Promise<SendResult> {
  const until = breaker.pausedUntil();
  if (until !== undefined) return pausedAll(to, breaker, until);
  try {
    const result = await send();
    breaker.reached();
    return result;
  } catch (error) {
    if (!(error instanceof DeliveryError)) breaker.abandoned();
    else if (unreachable(error) || refusesUs(error)) breaker.failed(error.response, refusesUs(error));
    else breaker.reached();
    throw error;
  }
}
