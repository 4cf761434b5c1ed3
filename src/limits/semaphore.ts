/** At most `size` holders at once; the others wait, first come first served. */
export interface Semaphore {
  acquire(): Promise<void>;
  release(): void;
}

export function createSemaphore(size: number): Semaphore {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    async acquire() {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}
