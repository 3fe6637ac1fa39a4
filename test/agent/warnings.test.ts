import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/agent.js';
import { openStore } from '../../src/store/open.js';
import type { TackWarning } from '../../src/util/warnings.js';
import { tack } from '../helpers/cli.js';
import { fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const NO_MODEL = { model: 'none', spec: 'none', provider: 'none', id: 'none' } as const;

/** Node's own warnings (process.emitWarning), which a library must not raise into its caller's output. */
let processWarnings: Error[] = [];
const onProcessWarning = (warning: Error) => processWarnings.push(warning);
beforeEach(() => {
  processWarnings = [];
  process.on('warning', onProcessWarning);
});
afterEach(() => {
  process.off('warning', onProcessWarning);
});

/** A state directory that cannot be made: its parent is a file. */
function unopenableHome(dir: string): string {
  writeFileSync(join(dir, 'file'), '');
  return join(dir, 'file', 'home');
}

describe('warnings reach the onWarning sink, never process warnings', () => {
  it('a store that will not open: STORE_DISABLED to the opener’s sink, silence without one', async () => {
    const p = scope.project('tack-warn-');
    const home = unopenableHome(p.dir);
    const paths = { ...p.load().paths, storeFile: join(home, 'tack.db') };
    const heard: TackWarning[] = [];
    expect(await openStore({ paths }, (w) => heard.push(w))).toBeUndefined();
    expect(heard).toEqual([{ code: 'STORE_DISABLED', message: expect.stringMatching(/^store disabled: /) }]);
    expect(await openStore({ paths })).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
    expect(processWarnings).toEqual([]);
  });

  it('an untrusted project: PROJECT_UNTRUSTED to startAgent’s sink', async () => {
    const p = scope.project('tack-warn-');
    delete p.env.TACK_TRUST_PROJECT;
    mkdirSync(join(p.dir, '.git'));
    p.write('tack.json', { mcpServers: { proj: fixtureEntry('stdio-server.js') } });
    const heard: TackWarning[] = [];
    const agent = await startAgent({
      config: p.load(),
      model: NO_MODEL,
      transcript: false,
      env: p.env,
      cwd: p.dir,
      onWarning: (w) => heard.push(w),
    });
    scope.defer(() => agent.close());
    expect(heard.map((w) => w.code)).toEqual(['PROJECT_UNTRUSTED']);
    expect(heard[0]!.message).toMatch(/not trusted: held back server "proj"/);
    await new Promise((resolve) => setImmediate(resolve));
    expect(processWarnings).toEqual([]);
  });

  it('the CLI prints them as its own warnings on stderr, with no Node warning lines', async () => {
    const p = scope.project('tack-warn-');
    p.write('tack.json', { mcpServers: {} });
    const run = await tack(['servers'], { cwd: p.dir, env: { ...p.env, TACK_HOME: unopenableHome(p.dir) } });
    expect(run.stderr).toMatch(/^warning: store disabled: /m);
    expect(run.stderr).not.toMatch(/\(node:\d+\)/);
  });
});
