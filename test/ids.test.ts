import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { idFloor, isUuid, nameBasedId, newId, newIdAt } from '../src/time/ids.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('entity ids', () => {
  it('are UUIDv7s, distinct, and sort in the order they were made', () => {
    const ids = Array.from({ length: 5000 }, newId);
    for (const id of ids) assert.match(id, UUID_V7);
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual([...ids].sort(), ids);
  });

  it('end in 32 random bits, fresh for each id across many refills of the random source', () => {
    const tails = new Set(Array.from({ length: 5000 }, () => newId().slice(-8)));
    // 5,000 draws of 32 bits collide about 0.003 times on average.
    assert.ok(tails.size >= 4995, `${tails.size} distinct tails of 5000`);
  });

  it('carry the time they were made in their first 48 bits', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    const millis = parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    assert.ok(millis >= before && millis <= after, `${millis} within [${before}, ${after}]`);
  });

  it('of a given time (a moved clock) carry that time, sort in the order they were made, and leave newId alone', () => {
    const later = Date.now() + 31 * 86_400_000;
    const ids = Array.from({ length: 1000 }, (_, i) => newIdAt(later + Math.floor(i / 100)));
    for (const id of ids) assert.match(id, UUID_V7);
    assert.deepEqual([...ids].sort(), ids);
    assert.ok(ids[0]! >= idFloor(later) && ids.at(-1)! < idFloor(later + 11));
    assert.ok(newId() < idFloor(later), 'newId keeps the wall clock');
  });

  it('derived from a name are UUIDs of version 8, the same for the same name and distinct for others', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => nameBasedId(`email\0${i}`));
    for (const id of ids) assert.ok(isUuid(id) && /^.{14}8.{4}[89ab]/.test(id), id);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(nameBasedId('email\u00000'), ids[0]);
  });
});
