import { checkOf, record, unanswered, type DeliverabilityCheck, type Finding } from './check.ts';
import { hostKey } from './lookups.ts';
import type { Sender } from './sender.ts';

/**
 * `return_path`: the envelope domain's MX names this host (MAILROOM_HOSTNAME), so that bounces to the
 * VERP address come back here. A relay's envelope sender that is not VERP leaves bounces to the relay.
 */
export async function checkReturnPath(sender: Sender): Promise<DeliverabilityCheck> {
  const { envelope, config, records } = sender;
  const host = config.mailHostname;
  if (!sender.verp) {
    return checkOf('return_path', [], `Through the relay the envelope sender is at ${envelope}: bounces go to the relay, whose notifications bring them back (docs/relays.md).`);
  }
  const publish = `Publish ${record(envelope, 'MX', `${records.spf_mx.priority} ${host}`)}.`;
  let mx: { exchange: string; priority: number }[];
  try {
    mx = await sender.lookups.mx(envelope);
  } catch (error) {
    return checkOf('return_path', [unanswered(envelope, error)], '');
  }
  const ours = mx.filter((entry) => hostKey(entry.exchange) === host);
  const others = mx.filter((entry) => hostKey(entry.exchange) !== host).map((entry) => hostKey(entry.exchange));
  const findings: Finding[] = [];
  if (mx.length === 0) findings.push({ status: 'fail', detail: `${envelope} has no MX record: bounces to its addresses are lost.`, fix: publish });
  else if (ours.length === 0) findings.push({ status: 'fail', detail: `The MX of ${envelope} names ${others.join(', ')}, not ${host}: bounces do not come back to Mailroom.`, fix: `Replace it with ${record(envelope, 'MX', `${records.spf_mx.priority} ${host}`)}.` });
  else if (others.length > 0) findings.push({ status: 'warn', detail: `The MX of ${envelope} also names ${others.join(', ')}: bounces sent there do not reach Mailroom.`, fix: `Remove the MX records of ${envelope} that name ${others.join(', ')}.` });
  return checkOf('return_path', findings, `The MX of ${envelope} names ${host}: bounces come back to Mailroom.`);
}
