import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSkills } from '../../src/skills/load.js';
import { formatScriptResult, runSkillScript } from '../../src/skills/scripts.js';
import {
  countingServer,
  eventually,
  FAKE_KEY,
  fakeHome,
  LINUX,
  pidsWith,
  readOnlyRootDir,
} from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** Tries each action in order; prints `<op> <target>: ok|<error>` per action, errors also on stderr as Node words them. */
const PROBE = `const fs = require('node:fs');
const http = require('node:http');
const actions = JSON.parse(process.argv[2]);
const report = (action, result) => console.log(action.op + ' ' + (action.path || action.url) + ': ' + result);
const get = (action) => new Promise((resolve) => {
  const proxy = process.env.HTTP_PROXY && new URL(process.env.HTTP_PROXY);
  const options = action.via === 'proxy'
    ? { host: proxy.hostname, port: proxy.port, path: action.url }
    : new URL(action.url);
  http.get(options, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(res.statusCode + ' ' + b)); })
    .on('error', (e) => { console.error(e.message); resolve(e.code); });
});
(async () => {
  for (const action of actions) {
    try {
      if (action.op === 'read') report(action, JSON.stringify(fs.readFileSync(action.path, 'utf8')));
      if (action.op === 'write') { fs.writeFileSync(action.path, 'from the script'); report(action, 'ok'); }
      if (action.op === 'get') report(action, await get(action));
      if (action.op === 'sleep') { report(action, 'sleeping'); setInterval(() => {}, 1000); }
    } catch (e) { console.error(e.message); report(action, e.code); }
  }
})();
`;

async function world(sandbox?: unknown) {
  const p = scope.project('tack-sandbox-skill-');
  const { home, key } = fakeHome(scope);
  p.env.HOME = home;
  mkdirSync(join(p.dir, 'skills', 'probe', 'scripts'), { recursive: true });
  p.write(
    'skills/probe/SKILL.md',
    '---\nname: probe\ndescription: Probes the sandbox. Use when testing it.\n---\n# probe\n',
  );
  p.write('skills/probe/scripts/probe.js', PROBE);
  p.write('tack.json', {
    skills: ['./skills'],
    ...(sandbox === undefined ? {} : { sandbox: { skillScripts: sandbox } }),
  });
  const config = p.load();
  const library = await loadSkills({ config });
  const run = (actions: unknown[], options: { timeoutMs?: number; marker?: string } = {}) =>
    runSkillScript(
      library.require('probe'),
      'probe.js',
      [JSON.stringify(actions), ...(options.marker ? [options.marker] : [])],
      {
        approve: () => true,
        sandbox: config.sandbox.skillScripts,
        env: { HOME: home },
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      },
    );
  return { p, key, config, run };
}

describe.runIf(LINUX)('skill scripts in their sandbox (bubblewrap, real namespaces)', () => {
  it('by default: workspace-write, no network; each refusal explained to the model with its rule', async () => {
    const target = await countingServer(scope, 'hello');
    const { p, key, config, run } = await world();
    expect(config.sandbox.skillScripts).toMatchObject({
      profile: 'workspace-write',
      network: false,
      required: false,
      origin: "tack's default for skill scripts",
    });
    const inside = join(p.dir, 'out.txt');
    const repo = join(readOnlyRootDir(), `skill-escape-${process.pid}.txt`);
    const skillFile = join(p.dir, 'skills', 'probe', 'SKILL.md');
    const result = await run([
      { op: 'read', path: key },
      { op: 'write', path: inside },
      { op: 'write', path: repo },
      { op: 'get', url: `http://127.0.0.1:${target.port}/`, via: 'direct' },
      { op: 'read', path: skillFile },
    ]);
    expect(result.stdout.trim().split('\n')).toEqual([
      `read ${key}: ENOENT`,
      `write ${inside}: ok`,
      `write ${repo}: EROFS`,
      `get http://127.0.0.1:${target.port}/: ECONNREFUSED`,
      `read ${skillFile}: ${JSON.stringify(readFileSync(skillFile, 'utf8'))}`,
    ]);
    expect(readFileSync(inside, 'utf8')).toBe('from the script');
    expect(existsSync(repo)).toBe(false);
    expect(target.requests).toEqual([]);
    expect(result.sandbox).toMatchObject({ state: 'enforced', network: 'off' });
    const text = formatScriptResult('probe.js', result);
    expect(text).toContain(
      `[sandbox: ${key} is not visible: the home folder is hidden (home: false, profile workspace-write)`,
    );
    expect(text).toContain(`[sandbox: writing ${repo} was refused: it is outside every writable path`);
    expect(text).toContain('[sandbox: a network connection was refused: the sandbox has no network');
  });

  it('with an allow-list: the proxy lets the listed host through and refuses the rest', async () => {
    const allowed = await countingServer(scope, 'allowed');
    const other = await countingServer(scope, 'other');
    const { run } = await world({ profile: 'workspace-write', network: [`127.0.0.1:${allowed.port}`] });
    const result = await run([
      { op: 'get', url: `http://127.0.0.1:${allowed.port}/yes`, via: 'proxy' },
      { op: 'get', url: `http://127.0.0.1:${other.port}/no`, via: 'proxy' },
    ]);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`get http://127.0.0.1:${allowed.port}/yes: 200 allowed`);
    expect(lines[1]).toMatch(
      new RegExp(
        `^get http://127.0.0.1:${other.port}/no: 403 tack sandbox proxy: 127.0.0.1:${other.port} is not in the allow-list \\(sandbox.skillScripts.network \\(tack.json\\)\\)`,
      ),
    );
    expect(allowed.requests).toEqual(['GET /yes']);
    expect(other.requests).toEqual([]);
    expect(result.sandboxNotes).toContain(
      `sandbox proxy: REFUSED GET 127.0.0.1:${other.port}: 127.0.0.1:${other.port} is not in the allow-list (sandbox.skillScripts.network (tack.json))`,
    );
  });

  it('kills the whole sandbox at the timeout', async () => {
    const marker = randomUUID();
    const { run } = await world();
    const result = await run([{ op: 'sleep', path: 'forever' }], { timeoutMs: 800, marker });
    expect(result.timedOut).toBe(true);
    expect(await eventually(() => pidsWith(marker).length === 0, 5000)).toBe(true);
  });

  it('"sandbox": false runs the script as it is (the control: the same script reads the key)', async () => {
    const { key, run } = await world(false);
    const result = await run([{ op: 'read', path: key }]);
    expect(result.stdout.trim()).toBe(`read ${key}: ${JSON.stringify(FAKE_KEY)}`);
    expect(result.sandbox).toBeUndefined();
  });
});
