/**
 * SQLite lets one connection write at a time, and a connection that finds the database locked sleeps in
 * its busy handler, which on the event loop would stall every request. The connections of one process
 * (the event loop's and the insert thread's, see inserter.ts) take turns through this lock instead: it
 * lives in shared memory, and waiting for it is asynchronous on either side.
 */
export class WriteLock {
  private readonly word: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.word = new Int32Array(buffer);
  }

  async acquire(): Promise<void> {
    while (Atomics.compareExchange(this.word, 0, 0, 1) !== 0) {
      const wait = Atomics.waitAsync(this.word, 0, 1);
      if (wait.async) await wait.value;
    }
  }

  release(): void {
    Atomics.store(this.word, 0, 0);
    Atomics.notify(this.word, 0, 1);
  }
}
