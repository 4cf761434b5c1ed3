import { Worker } from 'node:worker_threads';
import { AppError, isErrorCode } from './errors.ts';

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

/** What a thread answers to request `id`: a value, or the error that stopped it (message and code kept). */
export interface ThreadAnswer<T> {
  id: number;
  value?: T;
  error?: { message: string; code?: string };
}

/** An error as a thread sent it back: an AppError as itself, anything else an Error with its code. */
function revive({ message, code }: NonNullable<ThreadAnswer<never>['error']>): Error {
  if (isErrorCode(code)) return new AppError(code, message);
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

/** An error as a thread sends it back. */
export function describeError(error: unknown): ThreadAnswer<never>['error'] {
  const { message, code } = error as { message?: string; code?: string };
  return { message: String(message ?? error), code };
}

interface Waiting<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
}

/**
 * The event loop's side of a worker thread running a TypeScript module (with tsx's loader, as the
 * process): each call posts `{id, ...request}` and waits for the thread's answer with that id (a thread
 * may answer several in one message, as an array). The thread starts with the first call. If it dies,
 * the calls it held fail and the next call starts a new one. An idle thread does not keep the process
 * alive; one holding calls does.
 */
export class ThreadClient<T> {
  #worker: Worker | undefined;
  readonly #waiting = new Map<number, Waiting<T>>();
  #sequence = 0;

  constructor(
    private readonly module: URL,
    private readonly workerData: unknown,
    private readonly name: string,
  ) {}

  /** Sends `request`, moving the memory of `transfer` (the caller must not read it afterwards). */
  call(request: object, transfer: ArrayBuffer[] = []): Promise<T> {
    const id = this.#sequence++;
    const entry = {} as Waiting<T>;
    entry.promise = new Promise<T>((resolve, reject) => Object.assign(entry, { resolve, reject }));
    const worker = (this.#worker ??= this.#start());
    try {
      // Throws for what a message cannot carry (a function, say): then nothing was sent.
      worker.postMessage({ ...request, id }, transfer);
    } catch (error) {
      entry.reject(error as Error);
      return entry.promise;
    }
    this.#waiting.set(id, entry);
    if (this.#waiting.size === 1) worker.ref();
    return entry.promise;
  }

  /** Waits for the calls under way, then stops the thread. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#waiting.values()].map((entry) => entry.promise));
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #start(): Worker {
    const worker = startThread(this.module, this.workerData);
    worker.on('message', (message: ThreadAnswer<T> | ThreadAnswer<T>[]) => {
      for (const { id, value, error } of [message].flat()) {
        const entry = this.#waiting.get(id)!;
        this.#waiting.delete(id);
        if (error) entry.reject(revive(error));
        else entry.resolve(value!);
      }
      if (this.#waiting.size === 0) worker.unref();
    });
    const fail = (error: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      for (const entry of this.#waiting.values()) entry.reject(error);
      this.#waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error(`the ${this.name} thread stopped`)));
    worker.unref();
    return worker;
  }
}
