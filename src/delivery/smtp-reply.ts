// What an SMTP reply's codes say, read the same way by the transports (a server pushing back on our
// rate: throttle.ts) and by the outcome module (domain/outcomes/outcomes.ts: a bounce's type).

/**
 * Enhanced status codes that ask a sender to slow down: Gmail's 4.7.28 (rate limited for an unusual
 * rate of mail) and Microsoft's 4.7.500 to 4.7.699 ("server busy, try again later", new or unknown
 * senders). Gmail's 4.2.1 is left out: it speaks of one mailbox receiving too fast, not of the server.
 */
const SLOW_DOWN_STATUS = /^4\.7\.(28|[56]\d\d)$/;

/** The wording of a 4xx that asks the same where the status code does not. */
const SLOW_DOWN_TEXT = /too many (connections|messages|sessions|concurrent)|rate.?limit|unusual rate|throttl|server busy|slow down/i;

/** The enhanced status code in an answer or a DSN's Status, `5.1.1`; the reply code alone gives `5.0.0`. */
export function statusOf(text: string): string | undefined {
  const enhanced = text.match(/(?:^|[\s;(-])([245])\.(\d{1,3})\.(\d{1,3})(?=$|[\s;,.):])/);
  if (enhanced) return `${enhanced[1]}.${enhanced[2]}.${enhanced[3]}`;
  const basic = text.match(/(?:^|[\s;])([245])\d\d(?=$|[\s-])/);
  return basic ? `${basic[1]}.0.0` : undefined;
}

/**
 * Whether a refusal is the server pushing back on our rate rather than on this message: 421 (the
 * server closes the channel: overloaded, or too many connections from us), or a 4xx that says so.
 */
export function pushesBack(answer: { code: number | undefined; response: string }): boolean {
  const { code, response } = answer;
  if (code === 421) return true;
  if (code === undefined || code < 400 || code >= 500) return false;
  return SLOW_DOWN_STATUS.test(statusOf(response) ?? '') || SLOW_DOWN_TEXT.test(response);
}
