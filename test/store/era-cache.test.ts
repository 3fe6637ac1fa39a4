import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import { openDatabase } from '../../src/store/database.js';
import { ERA_VERDICT_TTL_MS, SqliteEraCache } from '../../src/store/era-cache.js';
import { tempProject } from '../helpers/project.js';

describe('era cache (SQLite)', () => {
  it('persists verdicts across opens, and retires them past their horizon', async () => {
    using project = tempProject();
    const file = join(project.home, 'state', 'tack.db');
    const discover = { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } };
    const t0 = 1_700_000_000_000;
    {
      const db = openDatabase(file);
      const cache = new SqliteEraCache(db);
      await cache.put('stdio:a', { prior: { kind: 'modern', discover } as never }, t0);
      await cache.put('http:b', { prior: { kind: 'legacy' }, httpTransport: 'sse' }, t0);
      db.close();
    }
    const db = openDatabase(file);
    const cache = new SqliteEraCache(db);
    expect(await cache.get('stdio:a', t0 + 1000)).toEqual({
      prior: { kind: 'modern', discover },
      storedAt: t0,
    });
    expect(await cache.get('http:b', t0 + 1000)).toMatchObject({
      prior: { kind: 'legacy' },
      httpTransport: 'sse',
    });
    // Legacy verdicts retire sooner: they would otherwise hide an upgraded server forever.
    expect(await cache.get('http:b', t0 + ERA_VERDICT_TTL_MS.legacy + 1)).toBeUndefined();
    expect(await cache.get('stdio:a', t0 + ERA_VERDICT_TTL_MS.legacy + 1)).toBeDefined();
    expect(await cache.get('stdio:a', t0 + ERA_VERDICT_TTL_MS.modern + 1)).toBeUndefined();
    await cache.delete('stdio:a');
    expect(await cache.get('stdio:a', t0)).toBeUndefined();
    db.close();
  });

  it('refuses a store written by a newer tack instead of misreading it', () => {
    using project = tempProject();
    const file = join(project.dir, 'future.db');
    const raw = new Database(file);
    raw.pragma('user_version = 99');
    raw.close();
    try {
      openDatabase(file);
      expect.unreachable();
    } catch (error) {
      expect(TackError.isInstance(error) && error.code).toBe('STORE_FAILED');
      expect((error as Error).message).toMatch(/schema version 99, newer than this tack understands/);
    }
  });
});
