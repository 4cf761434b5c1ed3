// npm run bench [-- name ...]: every figure is a rate or latency beside a baseline measured in the same run.
import { benchApi } from './api.ts';
import { benchAutomations } from './automations.ts';
import { benchBroadcasts } from './broadcasts.ts';
import { benchContacts } from './contacts.ts';
import { benchCounts } from './counts.ts';
import { benchDashboard } from './dashboard.ts';
import { benchDelivery, type Figure } from './delivery.ts';
import { benchDisk } from './disk.ts';
import { benchDkim } from './dkim.ts';
import { benchFaults } from './faults.ts';
import { benchLargeSends } from './large-sends.ts';
import { benchLists } from './lists.ts';
import { benchMetrics } from './metrics.ts';
import { benchReceiving } from './receiving.ts';
import { benchReports } from './reports.ts';
import { benchScale } from './scale.ts';
import { benchSubmission } from './submission.ts';
import { benchTemplates } from './templates.ts';
import { benchWebhooks } from './webhooks.ts';

const benches: Record<string, () => Promise<Figure[]>> = {
  api: benchApi,
  delivery: () => benchDelivery({ n: Number(process.env.BENCH_EMAILS ?? 5000) }),
  dkim: () => benchDkim({ n: Number(process.env.BENCH_EMAILS ?? 5000), rounds: 2 }),
  templates: () => benchTemplates({ n: Number(process.env.BENCH_EMAILS ?? 5000) }),
  contacts: () => benchContacts({ n: Number(process.env.BENCH_CONTACTS ?? 100000) }),
  broadcasts: () => benchBroadcasts({ n: Number(process.env.BENCH_CONTACTS ?? 100000) }),
  lists: () => benchLists({ n: Number(process.env.BENCH_CONTACTS ?? 100000) }),
  'large-sends': benchLargeSends,
  webhooks: () => benchWebhooks({ n: Number(process.env.BENCH_EMAILS ?? 5000) }),
  receiving: () => benchReceiving({ n: Number(process.env.BENCH_EMAILS ?? 4000) }),
  reports: () => benchReports({ bytes: Number(process.env.BENCH_REPORT_BYTES ?? 1024 * 1024) }),
  submission: () => benchSubmission({ n: Number(process.env.BENCH_EMAILS ?? 4000) }),
  dashboard: () => benchDashboard({ n: Number(process.env.BENCH_EMAILS ?? 100_000) }),
  metrics: () => benchMetrics({ n: Number(process.env.BENCH_EMAILS ?? 1_000_000), databaseUrl: process.env.BENCH_DATABASE_URL }),
  scale: () => benchScale({ n: Number(process.env.BENCH_EMAILS ?? 20_000) }),
  automations: () => benchAutomations({ n: Number(process.env.BENCH_EVENTS ?? 100_000) }),
  counts: () => benchCounts({ n: Number(process.env.BENCH_EMAILS ?? 1000) }),
  disk: () => benchDisk({ n: Number(process.env.BENCH_EMAILS ?? 5000), events: Number(process.env.BENCH_EVENTS ?? 1_000_000) }),
  faults: () => benchFaults({ faults: (process.env.BENCH_FAULTS ?? 'restart,terminate,outage,crash,read-only,hang').split(',') }),
};

const selected = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(benches);
for (const name of selected) {
  const bench = benches[name];
  if (!bench) throw new Error(`no bench named "${name}"; choose from ${Object.keys(benches).join(', ')}`);
  console.log(`\n## ${name}`);
  for (const figure of await bench()) {
    // Three decimals for ratios: a target of 0.30 must not be met by rounding 0.295 up.
    const value =
      figure.unit === 'ratio'
        ? figure.value.toFixed(3)
        : figure.unit === 'ms' || figure.unit === 's' || figure.unit === 'per email'
          ? figure.value.toFixed(2)
          : Math.round(figure.value).toLocaleString('en-US');
    console.log(`${figure.name.padEnd(56)} ${value.padStart(10)} ${figure.unit}`);
  }
}
