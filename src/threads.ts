import { Worker } from 'node:worker_threads';

const TSX_API = import.meta.resolve('tsx/esm/api');

/**
 * The memory of those of `buffers` that own all of it, to move to a thread rather than copy (a buffer
 * from Node's shared pool must be copied). A buffer moved is empty on this side afterwards.
 */
export function movable(buffers: Uint8Array[]): ArrayBuffer[] {
  return buffers
    .filter((b) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer)
    .map((b) => b.buffer as ArrayBuffer);
}

/** A view of what a message delivered, as a Buffer, without copying it. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A worker thread that runs a TypeScript module as the process does: it registers tsx's loader, then loads it. */
export function startThread(module: URL, workerData: unknown): Worker {
  const boot = `import(${JSON.stringify(TSX_API)}).then(({ register }) => { register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}
