// Faults of PostgreSQL under a steady stream of email (test/support/fault-rig.ts): for each, the
// seconds from the database's return to the first and to the last delivery it delayed, and the
// requests refused meanwhile (503 on the API, 451 on SMTP submission). BENCH_FAULTS picks and orders
// them (restart,terminate,outage,crash,read-only,hang; a name may repeat).
import type { Figure } from './delivery.ts';
import { FAULTS, startFaultRig, type FaultName } from '../test/support/fault-rig.ts';
import { clusterUnavailable } from '../test/support/postgres-cluster.ts';

export async function benchFaults(options: { faults: string[] }): Promise<Figure[]> {
  const unavailable = clusterUnavailable();
  if (unavailable) throw new Error(`bench faults runs a PostgreSQL cluster of its own: ${unavailable}`);
  const unknown = options.faults.filter((fault) => !(fault in FAULTS));
  if (unknown.length > 0) throw new Error(`no fault named ${unknown.join(', ')}; choose from ${Object.keys(FAULTS).join(', ')}`);
  const rig = await startFaultRig({ log: (line) => console.log(`  ${line}`) });
  const figures: Figure[] = [];
  try {
    const seen = new Map<string, number>();
    for (const fault of options.faults as FaultName[]) {
      const n = (seen.get(fault) ?? 0) + 1;
      seen.set(fault, n);
      const name = options.faults.filter((f) => f === fault).length > 1 ? `${fault} #${n}` : fault;
      const report = await rig.inject(fault);
      if (!report.running) throw new Error(`a Mailroom process exited during ${name}:\n${rig.stderr()}`);
      const count = (kind: string) => report.answers.get(kind) ?? 0;
      figures.push(
        { name: `${name}: return to first delayed delivery`, value: (report.firstMs ?? 0) / 1000, unit: 's' },
        { name: `${name}: return to last delayed delivery`, value: (report.lastMs ?? 0) / 1000, unit: 's' },
        { name: `${name}: HTTP requests answered 503 during it`, value: count('http 503'), unit: 'requests' },
        { name: `${name}: HTTP requests answered 200 during it`, value: count('http 200'), unit: 'requests' },
        { name: `${name}: SMTP messages answered 451 during it`, value: count('smtp 451'), unit: 'messages' },
        { name: `${name}: other answers (500, resets) at any time`, value: report.forbidden.length, unit: 'answers' },
        { name: `${name}: emails delivered twice`, value: report.duplicates, unit: 'emails' },
      );
    }
    figures.push({ name: 'emails accepted over the run', value: rig.accepted(), unit: 'emails' });
  } finally {
    await rig.close();
  }
  return figures;
}
