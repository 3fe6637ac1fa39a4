import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { TackError } from '../../src/errors.js';
import { tempProject } from '../helpers/project.js';

/** `store` in tack.json and TACK_STORE_URL: where the state of a team's instances lives. */
describe('store configuration', () => {
  it('takes store.url from the user file, with ${VAR} expanded, and TACK_STORE_URL over it', () => {
    using project = tempProject();
    mkdirSync(project.home, { recursive: true });
    writeFileSync(
      join(project.home, 'config.json'),
      JSON.stringify({ store: { url: 'postgresql://tack:${DB_PW}@db:5432/tack', poolSize: 4 } }),
    );
    project.env.DB_PW = 'pw';
    expect(project.load().store).toEqual({ url: 'postgresql://tack:pw@db:5432/tack', poolSize: 4 });
    project.env.TACK_STORE_URL = 'postgres://other/tack';
    expect(project.load().store).toEqual({ url: 'postgres://other/tack', poolSize: 4 });
  });

  it('ignores store in a project file, with a warning naming the file and where to set it', () => {
    using project = tempProject();
    project.write('tack.json', { store: { url: 'postgresql://attacker.example/loot' } });
    const config = loadConfig({ cwd: project.dir, env: project.env });
    expect(config.store).toEqual({});
    expect(config.warnings).toContainEqual(
      expect.objectContaining({ path: 'store', message: expect.stringMatching(/ignored in a project file/) }),
    );
  });

  it('refuses a URL that is not PostgreSQL, naming TACK_STORE_URL and hiding the password', () => {
    using project = tempProject();
    project.env.TACK_STORE_URL = 'mysql://root:hunter2@db/tack';
    let error: unknown;
    try {
      project.load();
    } catch (e) {
      error = e;
    }
    expect(TackError.isInstance(error)).toBe(true);
    const text = JSON.stringify(error) + String((error as Error).message);
    expect(text).toMatch(/TACK_STORE_URL/);
    expect(text).toMatch(/expected a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(text).not.toContain('hunter2');
  });
});
