import { createHash, randomFillSync } from 'node:crypto';
import { V7Generator } from 'uuidv7';

/**
 * Random words for UUIDv7s, drawn from the OS a kilobyte at a time. The library's default source draws
 * 32 bytes per call through Web Crypto; with this one an id costs about 250 ns instead of 400 to 470.
 */
function bufferedRandom(): { nextUint32(): number } {
  const words = new Uint32Array(256);
  let next = words.length;
  return {
    nextUint32() {
      if (next === words.length) {
        randomFillSync(words);
        next = 0;
      }
      return words[next++]!;
    },
  };
}

const generator = new V7Generator(bufferedRandom());
const clockGenerator = new V7Generator(bufferedRandom());

/**
 * New entity id: a UUIDv7. Time-ordered ids keep B-tree inserts at the right edge (2-3x faster batched
 * inserts, see perf-baselines.md) and make "newest first" the same order as "largest id first", so
 * pagination is keyset on the id alone and stable within one millisecond.
 */
export const newId = (): string => generator.generate().toString();

/**
 * A UUIDv7 of millisecond `ms`, a Clock's time (which tests move), for rows removed by age through a
 * range of their primary key (request logs). Increasing from call to call, as newId is; its own
 * generator, so that a moved clock leaves newId's order alone.
 */
export const newIdAt = (ms: number): string => clockGenerator.generateOrResetWithTs(ms).toString();

/**
 * A name-based id: the first 128 bits of SHA-256(name) in UUID version 8 layout. The same name always
 * gives the same id, so rows keyed by something else (an attachment by its email and position) get a
 * stable UUID without a column of their own.
 */
export function nameBasedId(name: string): string {
  const hash = createHash('sha256').update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x80;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * The smallest UUIDv7 of millisecond `ms`: every id made at or after `ms` sorts at or above it, so a
 * time range of rows is a range of their primary key.
 */
export function idFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-0000-000000000000`;
}
