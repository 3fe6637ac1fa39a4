import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/project.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Several processes opening one new store at the same moment (three `tack serve` started together, commands run
 * side by side on a fresh TACK_HOME): each must find the store migrated, none may fail on a table another made.
 */
describe('opening a new store', () => {
  it('from several processes at once migrates it once, and every process opens it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tack-store-race-'));
    dirs.push(dir);
    const file = join(dir, 'state', 'tack.db');
    const module = pathToFileURL(join(REPO, 'dist/src/store/database.js')).href;
    // Every process loads the module first, then waits for the same instant, so the opens really overlap.
    const at = Date.now() + 1_500;
    const source = `
      import { openDatabase } from ${JSON.stringify(module)};
      while (Date.now() < ${at}) {}
      try { openDatabase(${JSON.stringify(file)}).close(); }
      catch (error) { console.error(String(error)); process.exit(1); }`;
    const run = () =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on('exit', (code) => resolve({ code, stderr }));
      });
    const results = await Promise.all(Array.from({ length: 4 }, run));
    expect(results.map((r) => r.stderr).filter(Boolean)).toEqual([]);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBeGreaterThan(0);
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'audit'")
        .all();
      expect(tables).toHaveLength(1);
    } finally {
      db.close();
    }
  });
});
