// Mailroom's API in a process of its own for the lists bench, with one more route that answers the
// contacts list as Mailroom did before lists were streamed: every row in one query, the whole array
// through the route's schema. Reports, on request, the longest event-loop stall and the peak memory
// added since the last reset.
import { readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.ts';
import { readConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { seedApiKey } from '../src/domain/api-keys/api-keys.ts';
import { toContactItem } from '../src/domain/contacts/contacts.ts';
import { ContactItem } from '../src/http/schemas/contacts.ts';
import { listOf } from '../src/http/pagination.ts';
import { listOfSchema } from '../src/http/schemas/common.ts';

export interface ListServerStats {
  stallMs: number;
  addedMb: number;
}

const vmHwmMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

const ctx = await createContext(readConfig(process.env));
await seedApiKey(ctx);
const app = await buildApp(ctx);
app.get('/bench/contacts-whole', { schema: { response: { 200: listOfSchema(ContactItem) } } }, async () => {
  const columns = ['id', 'project_id', 'email', 'first_name', 'last_name', 'created_at', 'unsubscribed'] as const;
  const rows = await ctx.db.selectFrom('contacts').select(columns).orderBy('id', 'desc').execute();
  return listOf({ has_more: false, data: rows.map(toContactItem) });
});
const stalls = monitorEventLoopDelay({ resolution: 1 });
stalls.enable();
let baseMb = 0;
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', (message) => {
  if (message === 'reset') {
    stalls.reset();
    // Linux: "5" sets the peak resident memory (VmHWM) back to the current one.
    writeFileSync('/proc/self/clear_refs', '5');
    baseMb = vmHwmMb();
    process.send!('reset');
  } else if (message === 'stats') {
    process.send!({ stallMs: stalls.max / 1e6, addedMb: vmHwmMb() - baseMb } satisfies ListServerStats);
  }
});
process.send!({ address });
process.on('disconnect', () => process.exit(0));
