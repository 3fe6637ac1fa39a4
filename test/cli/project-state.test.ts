import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectKey } from '../../src/config/paths.js';
import { tack } from '../helpers/cli.js';
import { fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

/**
 * Two projects on one machine share one state folder (XDG_STATE_HOME, no TACK_HOME): each project's server logs go
 * to its own folder and `tack pins list` shows its own pins; `--all` shows every project's, with its path.
 */
const scope = testScope();

interface PinRow {
  server: string;
  name: string;
  projects: string[];
}

function machine() {
  const root = mkdtempSync(join(tmpdir(), 'tack-state-'));
  scope.defer(() => rmSync(root, { recursive: true, force: true }));
  const env: Record<string, string | undefined> = {
    ...process.env,
    TACK_HOME: undefined,
    HOME: join(root, 'home'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_STATE_HOME: join(root, 'state'),
    TACK_TRUST_PROJECT: '1',
  };
  const project = (name: string, servers: Record<string, unknown>) => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tack.json'), JSON.stringify({ mcpServers: servers }));
    return {
      dir,
      run: (...args: string[]) => tack(args, { cwd: dir, env }),
      reconfigure: (next: Record<string, unknown>) =>
        writeFileSync(join(dir, 'tack.json'), JSON.stringify({ mcpServers: next })),
    };
  };
  return { logs: join(root, 'state', 'tack', 'logs'), project };
}

/** A noisy fixture server (it writes to stderr at start) whose command line says which project it is in. */
const noisy = (tag: string) => fixtureEntry('noisy-server.js', ['--stderr-bytes', '300', '--tag', tag]);

async function pins(
  run: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>,
  ...extra: string[]
) {
  const listed = await run('pins', 'list', '--json', ...extra);
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as PinRow[];
}

describe('state per project', () => {
  it('keeps server logs and pins apart for two projects sharing one state folder', async () => {
    const { logs, project } = machine();
    // An older tack's flat log is left where it was.
    mkdirSync(logs, { recursive: true });
    writeFileSync(join(logs, 'fs.log'), 'an old line\n');
    const a = project('shop', { fs: noisy('a'), old: noisy('old') });
    const b = project('blog', { fs: noisy('b') });
    for (const p of [a, b]) {
      const checked = await p.run('pins', 'list', '--check');
      expect(checked.code, checked.stderr).toBe(0);
    }

    const keyA = projectKey(a.dir);
    const keyB = projectKey(b.dir);
    expect(keyA).toMatch(/^shop-[0-9a-f]{8}$/);
    expect(readdirSync(logs).sort()).toEqual([keyB, 'fs.log', keyA].sort());
    for (const [p, key, tag] of [
      [a, keyA, 'a'],
      [b, keyB, 'b'],
    ] as const) {
      expect(readFileSync(join(logs, key, 'project'), 'utf8')).toBe(`${p.dir}\n`);
      expect(readFileSync(join(logs, key, 'fs.log'), 'utf8')).toContain('noisy: done');
      // The log names the command line it started, which says whose server it was.
      expect(readFileSync(join(logs, key, 'fs.log'), 'utf8')).toContain(`--tag ${tag}`);
    }
    expect(existsSync(join(logs, keyB, 'old.log'))).toBe(false);
    expect(readFileSync(join(logs, 'fs.log'), 'utf8')).toBe('an old line\n');

    // A server since removed from the project's file is still the project's: it was seen there.
    a.reconfigure({ fs: noisy('a') });
    const ofA = await pins(a.run);
    const ofB = await pins(b.run);
    expect(new Set(ofA.map((r) => r.server))).toEqual(new Set(['fs', 'old']));
    expect(ofA.every((r) => r.projects.includes(a.dir))).toBe(true);
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofB.every((r) => r.projects.length === 1 && r.projects[0] === b.dir)).toBe(true);

    const all = await pins(b.run, '--all');
    expect(all.length).toBe(ofA.length + ofB.length);
    const table = await b.run('pins', 'list', '--all');
    expect(table.stdout).toMatch(/PROJECT/);
    expect(table.stdout).toContain(a.dir);
    expect(table.stdout).toContain(b.dir);
    const own = await b.run('pins', 'list');
    expect(own.stdout).toMatch(/^fs\s/m);
    expect(own.stdout).not.toMatch(/^old\s/m);
    expect(own.stdout).not.toContain('PROJECT');
  });
});
