import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqlite } from '../../src/store/db.ts';

// How every SQLite connection is set up (store/db.ts, openSqlite).

describe('a SQLite connection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-connection-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs in WAL mode with synchronous=NORMAL, foreign keys on, and a 64 MB page cache', () => {
    const sqlite = openSqlite(join(dir, 'mailroom.db'));
    try {
      assert.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(sqlite.pragma('synchronous', { simple: true }), 1, 'NORMAL');
      assert.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(sqlite.pragma('cache_size', { simple: true }), -64 * 1024, '64 MB, in KiB');
    } finally {
      sqlite.close();
    }
  });
});
