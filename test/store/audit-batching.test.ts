import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AuditEntry, SqliteAuditLog } from '../../src/store/audit.js';
import { openDatabase } from '../../src/store/database.js';
import { TackStore } from '../../src/store/store.js';
import { tempProject } from '../helpers/project.js';

const entry = (n: number): AuditEntry => ({
  at: new Date(1_700_000_000_000 + n).toISOString(),
  client: 'test (http, modern)',
  server: 'fx',
  tool: 'echo',
  argsSha256: n.toString(16).padStart(64, '0'),
  durationMs: 1,
  outcome: 'ok',
});

/** Rows in the file, read through a second connection (what another process, `tack audit`, would see). */
function rowsIn(file: string): number {
  const db = openDatabase(file);
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM audit').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('audit rows written in batches', () => {
  it('writes waiting rows on the timer, in one batch', async () => {
    using project = tempProject();
    const file = join(project.dir, 'audit.db');
    const db = openDatabase(file);
    try {
      const log = new SqliteAuditLog(db, { flushIntervalMs: 50 });
      for (let i = 0; i < 10; i++) log.recordSync(entry(i));
      expect(rowsIn(file)).toBe(0);
      await expect.poll(() => rowsIn(file), { timeout: 2000 }).toBe(10);
    } finally {
      db.close();
    }
  });

  it('writes a full batch at once, and every waiting row before a read and on close', () => {
    using project = tempProject();
    const file = join(project.dir, 'tack.db');
    const store = TackStore.open(file);
    const log = new SqliteAuditLog(store.db, { flushIntervalMs: 60_000, maxBatch: 4 });
    for (let i = 0; i < 5; i++) log.recordSync(entry(i));
    expect(rowsIn(file)).toBe(4);
    expect(log.recentSync(10)).toHaveLength(5);
    for (let i = 5; i < 8; i++) store.audit.recordSync(entry(i));
    expect(rowsIn(file)).toBe(5);
    store.closeSync();
    expect(rowsIn(file)).toBe(8);
  });

  it('keeps the rows a failed write could not take, for the next flush', () => {
    const store = TackStore.open(':memory:');
    try {
      const log = new SqliteAuditLog(store.db, { flushIntervalMs: 60_000 });
      log.recordSync(entry(1));
      store.db.exec('ALTER TABLE audit RENAME TO audit_away');
      expect(() => log.flushSync()).toThrow();
      store.db.exec('ALTER TABLE audit_away RENAME TO audit');
      log.recordSync(entry(2));
      expect(log.recentSync(10).map((e) => e.argsSha256)).toEqual([entry(2).argsSha256, entry(1).argsSha256]);
    } finally {
      store.close();
    }
  });
});
