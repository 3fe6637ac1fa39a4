import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ptyTack } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { fixtureEntry, REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';
import { type ScreenSession, screenTack } from '../helpers/screen.js';

const EXAMPLES = join(REPO, 'dist', 'examples', 'servers');
const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
const scope = testScope();
const { cleanups, fake } = scope;

function project(): TempProject {
  const p = scope.project('tack-tui-pty-');
  p.write('tack.json', {
    mcpServers: {
      notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
      weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')], trusted: true },
      cat: fixtureEntry('stdio-server.js'),
    },
  });
  return p;
}

/** The input box is whole: its top and bottom borders span the width, and the status line is under it. */
function layoutIntact(s: ScreenSession, cols: number): void {
  const rows = s.rows();
  const top = rows.findLastIndex((r) => r.startsWith('╭'));
  const bottom = rows.findLastIndex((r) => r.startsWith('╰'));
  expect(top, s.screen()).toBeGreaterThanOrEqual(0);
  expect(bottom).toBeGreaterThan(top);
  expect(rows[top]).toMatch(new RegExp(`^╭─{${cols - 2}}╮$`));
  expect(rows[bottom]).toMatch(new RegExp(`^╰─{${cols - 2}}╯$`));
  expect(rows[bottom + 1]).toMatch(/^anthropic:claude-sonnet-4-5 │ ctx /);
}

/**
 * The whole terminal, scrollback included, holds one frame: the one at the bottom. Above it no input box border
 * (╭ ╰), no input line (│ ›) and no running line (⋯) may be left, and each message was written once.
 */
function scrollbackClean(s: ScreenSession, messages: readonly string[]): void {
  const lines = s.lines();
  const frameTop = lines.findLastIndex((l) => l.startsWith('╭'));
  expect(frameTop, s.lines().join('\n')).toBeGreaterThan(0);
  const above = lines.slice(0, frameTop);
  const stray = above.filter((l) => /^(╭|╰|│ ›|⋯ )/.test(l));
  expect(stray, above.join('\n')).toEqual([]);
  for (const message of messages)
    expect(
      lines.filter((l) => l === `› ${message}`),
      `"› ${message}" once in:\n${lines.join('\n')}`,
    ).toHaveLength(1);
}

describe('tack chat in a pseudo-terminal, read off an emulated screen', () => {
  for (const [cols, rows] of [
    [120, 40],
    [100, 30],
    [80, 24],
  ] as const) {
    it(`leaves no stale frame in the scrollback at ${cols}x${rows}: turns, a tool call, /help`, async () => {
      const p = project();
      const provider = await fake([
        { text: 'First answer.' },
        { toolCalls: [{ id: 'w1', name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
        { text: 'Second answer, **sunny**.' },
        { text: 'Third answer:\n\n- one\n- two' },
        { text: 'Fourth answer.' },
      ]);
      const s = screenTack(['chat', ...MODEL], {
        cwd: p.dir,
        env: { ...p.env, ...providerEnv(provider) },
        cols,
        rows,
        onStart: (kill) => cleanups.push(kill),
      });
      await s.waitFor('servers 3 up');
      const turn = async (message: string, answer: string) => {
        s.keys(message);
        await s.waitFor(`› ${message}`);
        s.keys('\r');
        await s.waitFor(answer);
        await s.waitFor('message, /help, @file');
      };
      await turn('hello there', 'First answer.');
      await turn('the weather', 'Second answer, sunny.');
      s.keys('/help');
      await s.waitFor('› /help');
      s.keys('\r');
      await s.waitFor('@path in a message attaches');
      await turn('a list', 'two');
      await turn('last one', 'Fourth answer.');
      layoutIntact(s, cols);
      scrollbackClean(s, ['hello there', 'the weather', 'a list', 'last one']);
      // The /help output is in the scrollback once, whole.
      expect(s.lines().filter((l) => l.startsWith('/help     this list'))).toHaveLength(1);
      s.keys('\u0004');
      expect(await s.exited()).toBe(0);
    }, 90_000);
  }

  it('draws at once while a slow server starts, takes a message meanwhile, and shows time and tokens', async () => {
    const p = scope.project('tack-tui-pty-');
    p.write('tack.json', {
      mcpServers: {
        notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
        weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')], trusted: true },
        // Answers initialize only after 10 s: a cold `npx` server.
        slow: fixtureEntry('stdio-server.js', ['--delay-start', '10000', '--name', 'slow']),
      },
    });
    const provider = await fake([
      { toolCalls: [{ id: 'w1', name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
      // Long enough for the running line to count seconds, after a step whose tokens it shows.
      { text: 'Lisbon is sunny.', delayMs: 3500 },
    ]);
    const s = screenTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      cols: 100,
      rows: 30,
      onStart: (kill) => cleanups.push(kill),
    });
    // The first frame: the folder, the /help hint, the input box and the servers coming up, the slow one not yet.
    await s.waitFor(/connecting \d\/3: .*slow …/);
    expect(s.screen()).toContain(`tack chat in ${p.dir}`);
    expect(s.screen()).toContain('/help lists the commands');
    layoutIntact(s, 100);
    // A message sent now waits for the servers, then goes out with every tool, the slow server's too.
    s.keys('weather in Lisbon?');
    await s.waitFor('› weather in Lisbon?');
    s.keys('\r');
    await s.waitFor(/⋯ waiting for the servers to connect \d+s/);
    expect(provider.requests).toHaveLength(0);
    await s.waitFor(/⋯ working [1-9]\d*s · [1-9][\d.]*k? tokens · Esc interrupts/, 30_000);
    expect(s.screen()).toContain('servers 3 up');
    expect(provider.requests[0]!.tools.map((t) => t.name)).toContain('mcp__slow__echo');
    await s.waitFor('Lisbon is sunny.');
    expect(s.screen()).not.toMatch(/⋯ working/);
    s.keys('\u0004');
    expect(await s.exited()).toBe(0);
  }, 90_000);

  for (const cols of [60, 200]) {
    it(`two turns at ${cols} columns: Markdown streamed, a tool call expanded, an approval, /exit`, async () => {
      const p = project();
      const provider = await fake([
        {
          text: '## Forecast plan\n\nI will use `get_forecast`:\n\n```sh\ntack call mcp__weather__get_forecast\n```',
        },
        { toolCalls: [{ id: 'w1', name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
        {
          toolCalls: [{ id: 'n1', name: 'mcp__notes__add_note', input: { title: 'Lisbon', body: 'sunny' } }],
        },
        { text: 'Lisbon is **sunny**; noted.' },
      ]);
      const s = screenTack(['chat', ...MODEL], {
        cwd: p.dir,
        env: { ...p.env, ...providerEnv(provider) },
        cols,
        rows: 40,
        onStart: (kill) => cleanups.push(kill),
      });
      await s.waitFor('servers 3 up');
      layoutIntact(s, cols);
      s.keys('plan the forecast');
      await s.waitFor('plan the forecast');
      s.keys('\r');
      await s.waitFor('tack call mcp__weather__get_forecast');
      expect(s.screen()).toContain('Forecast plan');
      expect(s.screen()).not.toContain('```');

      s.keys('weather and note it');
      await s.waitFor('weather and note it');
      s.keys('\r');
      await s.waitFor('Approve notes › add_note?');
      expect(s.screen()).toContain('Why it asks: it may change something (not read-only).');
      s.keys('y');
      await s.waitFor('Lisbon is sunny; noted.');
      // "N ms" below a second, "N.N s" from there (formatDuration): a loaded machine gets there.
      expect(s.screen()).toMatch(/✓ weather › get_forecast city: "Lisbon" (\d+ ms|\d+\.\d s)/);
      // The argument summary is cut to the width; the figures after it never are.
      expect(s.screen()).toMatch(
        /✓ notes › add_note title: "L[^\n]* (\d+ ms|\d+\.\d s) \(\+(\d+ ms|\d+\.\d s) approving\)/,
      );
      if (cols >= 100) expect(s.screen()).toContain('add_note title: "Lisbon", body: "sunny"');
      expect(s.screen()).not.toContain('Lisbon: 16');
      s.keys('\u000f');
      await s.waitFor('Lisbon: 16');
      expect(s.screen()).not.toContain('<tool_result');
      layoutIntact(s, cols);

      s.keys('/exit');
      await s.waitFor('/exit');
      s.keys('\r');
      expect(await s.exited()).toBe(0);
    }, 60_000);
  }

  it('Esc interrupts a long tool call, and the chat goes on', async () => {
    const p = project();
    const provider = await fake([
      { toolCalls: [{ id: 's1', name: 'mcp__cat__slow', input: { steps: 200, delayMs: 100 } }] },
      { text: 'After the interruption.' },
    ]);
    const s = screenTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      cols: 100,
      rows: 30,
      onStart: (kill) => cleanups.push(kill),
    });
    await s.waitFor('servers 3 up');
    s.keys('be slow');
    await s.waitFor('be slow');
    s.keys('\r');
    await s.waitFor('Approve cat › slow?');
    s.keys('y');
    await s.waitFor(/⋯ cat › slow/);
    s.keys('\u001b');
    await s.waitFor('aborted: interrupted', 10_000);
    s.keys('go on');
    await s.waitFor('go on');
    s.keys('\r');
    await s.waitFor('After the interruption.');
    s.keys('\u0004');
    expect(await s.exited()).toBe(0);
  }, 60_000);

  it('honours NO_COLOR, and falls back to the line mode for TERM=dumb and under CI', async () => {
    const p = project();
    const provider = await fake([
      { text: 'Plain **answer**.' },
      { text: 'Line mode.' },
      { text: 'CI mode.' },
    ]);
    const env = { ...p.env, ...providerEnv(provider) };
    const s = screenTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...env, NO_COLOR: '1' },
      cols: 100,
      rows: 30,
      onStart: (kill) => cleanups.push(kill),
    });
    await s.waitFor('servers 3 up');
    s.keys('hi');
    await s.waitFor('hi');
    s.keys('\r');
    await s.waitFor('Plain answer.');
    // No color at all: no SGR sequence setting a foreground or background color.
    const sgrColor = new RegExp(
      `${String.fromCharCode(27)}\\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7])(?:;[0-9;]*)?m`,
    );
    expect(s.raw()).not.toMatch(sgrColor);
    s.keys('\u0004');
    expect(await s.exited()).toBe(0);

    const dumb = ptyTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...env, TERM: 'dumb', CI: undefined, CONTINUOUS_INTEGRATION: undefined },
      onStart: (kill) => cleanups.push(kill),
    });
    await dumb.waitFor('/tools /skills /cost /compact /resume /model /exit');
    dumb.type('hello');
    await dumb.waitFor('Line mode.');
    dumb.type('/exit');
    expect(await dumb.exited()).toBe(0);

    // Ink draws nothing until exit where CI is set, so tack chat takes the line mode there, terminal or not.
    const ci = ptyTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...env, TERM: 'xterm-256color', CI: 'true' },
      onStart: (kill) => cleanups.push(kill),
    });
    await ci.waitFor('/tools /skills /cost /compact /resume /model /exit');
    ci.type('hello');
    await ci.waitFor('CI mode.');
    ci.type('/exit');
    expect(await ci.exited()).toBe(0);
  }, 60_000);

  it('/resume in the real tack chat: picks the earlier session, shows it, and the next turn continues it', async () => {
    const p = project();
    const provider = await fake([{ text: 'Alpha noted.' }, { text: 'You said alpha.' }]);
    const options = {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      cols: 100,
      rows: 30,
      onStart: (kill: () => void) => cleanups.push(kill),
    };
    const first = screenTack(['chat', ...MODEL], options);
    await first.waitFor('servers 3 up');
    first.keys('remember alpha');
    await first.waitFor('remember alpha');
    first.keys('\r');
    await first.waitFor('Alpha noted.');
    first.keys('\u0004');
    expect(await first.exited()).toBe(0);
    const id = /session (\S+) \(tack chat --resume/.exec(first.raw())?.[1];
    expect(id).toBeDefined();

    const s = screenTack(['chat', ...MODEL], options);
    await s.waitFor('servers 3 up');
    s.keys('/resume');
    await s.waitFor('/resume');
    s.keys('\r');
    await s.waitFor('Resume a session (1 in this folder)');
    expect(s.screen()).toMatch(/› \w+ .*remember alpha/);
    s.keys('\r');
    await s.waitFor(`resumed session ${id}`);
    await s.waitFor('Alpha noted.');
    s.keys('what did I say?');
    await s.waitFor('what did I say?');
    s.keys('\r');
    await s.waitFor('You said alpha.');
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('remember alpha');
    s.keys('\u0004');
    expect(await s.exited()).toBe(0);
    // It leaves naming the session it was on at the end: the resumed one.
    expect(s.raw()).toContain(`session ${id} (tack chat --resume`);
  }, 60_000);
});
