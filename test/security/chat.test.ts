import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ptyTack, tack } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { fixture, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
const scope = testScope();
const { cleanups, fake } = scope;

function project(): TempProject {
  const p = scope.project('tack-chat-sec-');
  p.write('tack.json', {
    mcpServers: {
      rug: { command: process.execPath, args: [fixture('attack-server.js'), '--role', 'rugpull'] },
    },
  });
  return p;
}

/** `tack chat` in a real pseudo-terminal, in its line mode (the full-screen one: test/tui/). */
const chat = (p: TempProject, env: Record<string, string | undefined>) =>
  ptyTack(['chat', '--plain', ...MODEL], { cwd: p.dir, env, onStart: (kill) => cleanups.push(kill) });

/**
 * Until the chat has re-listed the rug server's tools after its list_changed: the server's log (per project, under
 * the state folder) says so. The next turn must not start before, or it is a race the test did not mean to run.
 */
async function relisted(p: TempProject): Promise<void> {
  const root = p.load().paths.logDir;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const logs = existsSync(root)
      ? readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('rug.log'))
      : [];
    if (logs.some((f) => readFileSync(join(root, f), 'utf8').includes('tools list changed; refreshed')))
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no "tools list changed; refreshed" in the rug server's log under ${root} within 20 s`);
}

const add = (id: string) => ({ toolCalls: [{ id, name: 'mcp__rug__add', input: { a: 1, b: 2 } }] });

describe('approvals and pins in tack chat', () => {
  it('asks with the arguments, saves "always" to the user config, and puts a changed tool to the user', async () => {
    const p = project();
    const provider = await fake([add('c1'), { text: 'It is 3.' }, add('c2'), { text: 'No add tool now.' }]);
    const session = chat(p, { ...p.env, ...providerEnv(provider) });
    await session.waitFor('> ');
    session.type('add 1 and 2');
    await session.waitFor('Approve mcp__rug__add (server rug)? It may change something (not read-only).');
    expect(session.output).toMatch(/description sha256:[0-9a-f]{12}/);
    expect(session.output).toMatch(/"a": 1,\s+"b": 2/);
    await session.waitFor('[a] always (adds mcp__rug__add to the user config)');
    session.type('a');
    // The server changed the tool after that call. Before the next step (of this run, or of the next one when
    // its list_changed comes in later), the user is shown why it is held, with the diff, and asked.
    await session.waitFor(/It is 3\.|Accept this tool/);
    const askedFirst = !session.output.includes('It is 3.');
    if (!askedFirst) {
      await relisted(p);
      session.type('again');
    }
    await session.waitFor('rug: tool add changed since it was approved');
    await session.waitFor(/\+ {2}"description": "Add two numbers\. <IMPORTANT>/);
    await session.waitFor('Accept this tool and use it? [y/N]');
    session.type('n');
    if (askedFirst) {
      await session.waitFor('It is 3.');
      session.type('again');
    }
    await session.waitFor('No add tool now.');
    session.type('/exit');
    expect(await session.exited()).toBe(0);

    // Declined: the model was not offered the tool, and the user config kept the "always".
    expect(provider.requests[2]!.tools.map((t) => t.name)).not.toContain('mcp__rug__add');
    const userFile = p.load().paths.userConfigFile;
    expect(existsSync(userFile)).toBe(true);
    expect(JSON.parse(readFileSync(userFile, 'utf8')).permissions.allow).toEqual(['mcp__rug__add']);
    // Still held for later sessions, headless ones included.
    const list = await tack(['pins', 'list', 'rug'], { cwd: p.dir, env: p.env });
    expect(list.code).toBe(1);
    expect(list.stdout).toMatch(/tool\s+add\s+changed/);
  });

  it('headless runs never ask: --approve never denies and says why', async () => {
    const p = project();
    const provider = await fake([add('c1'), { text: 'denied' }]);
    const run = await tack(['run', ...MODEL, '--approve', 'never', '--json', 'add'], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    // Answered, but with a call refused for want of someone to ask: exit 4.
    expect(run.code, run.stderr).toBe(4);
    const approval = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'approval');
    expect(approval).toMatchObject({
      name: 'mcp__rug__add',
      decision: 'deny',
      by: 'policy',
      reason: '--approve never: may change something (not read-only)',
    });
  });
});
