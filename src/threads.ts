import { Worker } from 'node:worker_threads';

const TSX_API = import.meta.resolve('tsx/esm/api');

/** A worker thread that runs a TypeScript module as the process does: it registers tsx's loader, then loads it. */
export function startThread(module: URL, workerData: unknown): Worker {
  const boot = `import(${JSON.stringify(TSX_API)}).then(({ register }) => { register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}
