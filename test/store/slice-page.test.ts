import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.ts';
import { slicePage } from '../../src/store/paginate.ts';

const rows = ['e', 'c', 'a', 'd', 'b'].map((id) => ({ id }));
const page = (limit: number | undefined, cursors: { after?: string; before?: string } = {}) => {
  const { has_more, data } = slicePage(rows, { limit, after: cursors.after, before: cursors.before });
  return { has_more, ids: data.map((row) => row.id).join('') };
};

describe('slicePage: a list in memory, in its own order', () => {
  it('pages forward from the start or after a cursor, and backward before one', () => {
    assert.deepEqual(page(undefined), { has_more: false, ids: 'ecadb' });
    assert.deepEqual(page(2), { has_more: true, ids: 'ec' });
    assert.deepEqual(page(2, { after: 'c' }), { has_more: true, ids: 'ad' });
    assert.deepEqual(page(2, { after: 'a' }), { has_more: false, ids: 'db' });
    assert.deepEqual(page(2, { after: 'b' }), { has_more: false, ids: '' });
    assert.deepEqual(page(2, { before: 'b' }), { has_more: true, ids: 'ad' });
    assert.deepEqual(page(2, { before: 'a' }), { has_more: false, ids: 'ec' });
    assert.deepEqual(page(undefined, { before: 'd' }), { has_more: false, ids: 'eca' });
  });

  it('refuses a cursor that names no row', () => {
    assert.throws(() => page(2, { after: 'z' }), (error: AppError) => error.code === 'validation_error' && /`after`/.test(error.message));
    assert.throws(() => page(2, { before: 'z' }), (error: AppError) => error.code === 'validation_error' && /`before`/.test(error.message));
  });
});
