import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONCURRENCY, FAULTS, startFaultRig, type FaultName, type FaultRig, type FaultReport } from './support/fault-rig.ts';
import { clusterUnavailable } from './support/postgres-cluster.ts';

// Every fault of PostgreSQL an operator meets, injected in turn under a steady stream of email: the
// API and the worker run as processes of their own on a cluster of the test's own. After each, both
// still run, every accepted email is delivered (twice at most for the sends under way when it struck),
// every answer meanwhile was a 503 in the error shape with Retry-After or SMTP's 451 4.3.0, and each
// process logged one line when the database went away and one when it came back.

const unavailable = clusterUnavailable();
const ORDER: FaultName[] = ['restart', 'terminate', 'outage', 'crash', 'read-only', 'hang'];

const seconds = (ms: number | undefined) => (ms === undefined ? 'none delayed' : `${(ms / 1000).toFixed(1)} s`);

describe('PostgreSQL faults under load', { skip: unavailable && `no PostgreSQL cluster of the test's own: ${unavailable}`, timeout: 230_000 }, () => {
  let rig: FaultRig;
  before(async () => {
    rig = await startFaultRig();
  });
  after(async () => {
    await rig?.close();
  });

  for (const fault of ORDER) {
    it(`${fault} (${FAULTS[fault]}): no process exits, every accepted email is delivered, every answer meanwhile is 503 or 451`, async (t) => {
      const report: FaultReport = await rig.inject(fault);
      const answers = [...report.answers].map(([kind, n]) => `${kind}: ${n}`).join(', ');
      t.diagnostic(
        `${fault}: from the database's return to the first delayed delivery ${seconds(report.firstMs)}, to the last ${seconds(report.lastMs)}; ` +
          `answers meanwhile ${answers || 'none'}; ${report.duplicates} delivered twice`,
      );
      assert.ok(report.running, `a Mailroom process exited:\n${rig.stderr()}`);
      assert.deepEqual(report.forbidden, [], 'every answer was 200 or 503 in the error shape with Retry-After (HTTP), 250 or 451 4.3.0 (SMTP)');
      assert.ok(report.duplicates <= CONCURRENCY, `${report.duplicates} emails delivered twice: more than the ${CONCURRENCY} sends a worker has under way`);
      for (const [name, lines] of Object.entries(report.lines)) {
        assert.ok(lines.down <= 1, `the ${name} process logged the database going away ${lines.down} times`);
        assert.equal(lines.back, lines.down, `the ${name} process logged the database's return once for each time it went away`);
      }
    });
  }
});
