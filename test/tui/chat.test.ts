import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import { describe, expect, it } from 'vitest';
import { type RunningAgent, secretMaskerFor, startAgent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { type ResolvedModel, resolveModel } from '../../src/agent/model.js';
import { ChatApp } from '../../src/tui/app.js';
import { type ChatTui, createChatTui } from '../../src/tui/run.js';
import { theme } from '../../src/tui/theme.js';
import { unwrapResult } from '../../src/tui/transcript-view.js';
import { type FakeProvider, type FakeScript, providerEnv } from '../helpers/fake-provider.js';
import { fixtureEntry, REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const EXAMPLES = join(REPO, 'dist', 'examples', 'servers');
const scope = testScope();
const { cleanups, fake } = scope;

const SERVERS = {
  notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
  weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')], trusted: true },
};

interface Chat {
  /** The agent the chat runs on now (/resume and /model start another). */
  readonly agent: RunningAgent;
  provider: FakeProvider;
  tui: ChatTui;
  events: AgentEvent[];
  /** The live screen (the last frame), without colors. */
  screen(): string;
  /** Everything written so far (earlier turns go to the scrollback once), without colors. */
  all(): string;
  type(text: string): void;
  key(sequence: string): void;
  waitFor(text: string | RegExp, where?: 'screen' | 'all'): Promise<void>;
  exited(): boolean;
}

/** A real session (startAgent: real MCP servers, the fake model server) drawn by the real ChatApp. */
async function chat(
  p: TempProject,
  script: FakeScript,
  servers: Record<string, unknown> = SERVERS,
  /** A session to start in, as `tack chat --resume <id>` does. */
  resume?: string,
): Promise<Chat> {
  const provider = await fake(script);
  const config = p.config(servers);
  const tui = createChatTui();
  const events: AgentEvent[] = [];
  // The model's key and address come from the fake server; everything else as `tack chat` has it.
  const env = { ...p.env, ...providerEnv(provider) };
  const model = resolveModel('anthropic:claude-sonnet-4-5', env);
  const start = (target: { resume?: string; model: ResolvedModel }) =>
    startAgent({
      config,
      model: target.model,
      cwd: p.dir,
      env: p.env,
      approver: tui.approver,
      interaction: tui.interaction,
      session: { pins: { reviewer: tui.reviewer }, maxRetries: 0 },
      ...(target.resume ? { resume: target.resume } : {}),
      onEvent: (event) => {
        events.push(event);
        tui.onEvent(event);
      },
    });
  let agent = await start({ model, ...(resume ? { resume } : {}) });
  cleanups.push(() => agent.close());
  let left = false;
  const ui = render(
    h(ChatApp, {
      agent,
      switcher: {
        model,
        resolveModel: (spec) => resolveModel(spec, env),
        start,
        onAgent: (next) => {
          agent = next;
        },
      },
      view: tui.view,
      dialogs: tui.dialogs,
      window: 200_000,
      cwd: p.dir,
      masker: secretMaskerFor(config),
      theme: theme(true),
      onExit: () => {
        left = true;
      },
    }),
  );
  cleanups.push(() => ui.unmount());
  const screen = () => stripVTControlCharacters(ui.lastFrame() ?? '');
  const all = () => stripVTControlCharacters(ui.frames.join('\n'));
  return {
    get agent() {
      return agent;
    },
    provider,
    tui,
    events,
    screen,
    all,
    type(text) {
      ui.stdin.write(text);
    },
    key(sequence) {
      ui.stdin.write(sequence);
    },
    async waitFor(text, where = 'screen') {
      const read = where === 'screen' ? screen : all;
      const seen = () => (typeof text === 'string' ? read().includes(text) : text.test(read()));
      const deadline = Date.now() + 15_000;
      while (!seen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(read()).toMatch(text);
    },
    exited: () => left,
  };
}

/** Types a message and Enter, letting Ink take the keystrokes apart as a terminal would send them. */
async function send(c: Chat, text: string): Promise<void> {
  c.type(text);
  await c.waitFor(text.split('\n').at(-1)!);
  c.key('\r');
}

const UP = '\u001b[A';
const ESC = '\u001b';
const CTRL_O = '\u000f';

describe('tack chat, full screen, against a real session', () => {
  it('streams a Markdown answer rendered for the terminal, and the status line has the figures', async () => {
    const p = scope.project('tack-tui-');
    const answer = '# Plan\n\nUse **tack** here.\n\n```js\nconst answer = 42;\n```\n\n- one\n- two';
    const c = await chat(p, [{ text: answer, usage: { input: 12_345, output: 67 } }]);
    await c.waitFor('anthropic:claude-sonnet-4-5');
    await send(c, 'plan it');
    await c.waitFor('const answer = 42;');
    const screen = c.screen();
    expect(screen).toContain('› plan it');
    expect(screen).toContain('Plan');
    expect(screen).not.toContain('```');
    expect(screen).not.toContain('**tack**');
    // Status line: context used vs window, from the last call's input tokens; cost from the session's totals.
    await c.waitFor('ctx 12k/200k (6%)');
    const cost = c.agent.session.usage.costUsd;
    expect(cost).toBeGreaterThan(0);
    expect(c.screen()).toContain(`$${cost.toFixed(4)}`);
    expect(c.screen()).toMatch(/servers 2 up/);
  });

  it('the status line says what share of the input the provider read from its prompt cache', async () => {
    const p = scope.project('tack-tui-');
    // As Anthropic reports it: 1,000 tokens not cached, 9,000 read from the cache.
    const c = await chat(p, [{ text: 'Cached.', usage: { input: 1_000, output: 10, cacheRead: 9_000 } }]);
    await send(c, 'hello');
    await c.waitFor('(90% cached)');
    const cost = c.agent.session.usage.costUsd;
    // Claude Sonnet 4.5: $3 per million input tokens, $0.30 per million read from the cache, $15 per million out.
    expect(cost).toBeCloseTo((1_000 * 3 + 9_000 * 0.3 + 10 * 15) / 1e6, 12);
    expect(c.screen()).toContain(`$${cost.toFixed(4)} (90% cached)`);
  });

  it('folds a tool call to one line and expands it with Ctrl-O, never showing the <tool_result> wrapper', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [
      { toolCalls: [{ name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
      { text: 'Sunny in Lisbon.' },
    ]);
    await send(c, 'weather?');
    await c.waitFor('Sunny in Lisbon.');
    const folded = c.screen();
    expect(folded).toMatch(/✓ weather › get_forecast city: "Lisbon" (\d+ ms|\d+\.\d s)/);
    const result = c.events.find((e) => e.type === 'tool-result');
    const forecast = result?.type === 'tool-result' ? unwrapResult(result.text).split('\n')[0]! : '';
    expect(forecast).toContain('Lisbon');
    expect(folded).not.toContain(forecast);
    c.key(CTRL_O);
    await c.waitFor(forecast);
    expect(c.screen()).toContain('"city": "Lisbon"');
    expect(c.screen()).not.toContain('<tool_result');
    c.key(CTRL_O);
    await c.waitFor(/get_forecast/);
    await expect.poll(() => c.screen().includes(forecast)).toBe(false);
  });

  it('asks approval in a dialog: n denies, y allows; the wait is not counted as tool time', async () => {
    const p = scope.project('tack-tui-');
    const add = (id: string, title: string) => ({
      toolCalls: [{ id, name: 'mcp__notes__add_note', input: { title, body: 'b' } }],
    });
    const c = await chat(p, [add('c1', 'first'), add('c2', 'second'), { text: 'Noted.' }]);
    await send(c, 'note it');
    await c.waitFor('Approve notes › add_note?');
    expect(c.screen()).toContain('Why it asks: it may change something (not read-only).');
    expect(c.screen()).toMatch(/"title": "first"/);
    expect(c.screen()).toContain('[y] once  [s] this session  [a] always (saves mcp__notes__add_note');
    c.type('n');
    await c.waitFor(/⊘ notes › add_note title: "first"/);
    expect(c.screen()).toContain('not run: denied by the user');
    await c.waitFor(/"title": "second"/);
    // A person thinking: the call's own time must not include this.
    await new Promise((r) => setTimeout(r, 400));
    const answered = performance.now();
    c.type('y');
    await c.waitFor('Noted.');
    const seen = performance.now();
    // A duration reads "N ms" below a second and "N.N s" from there (formatDuration): a loaded machine gets there.
    expect(c.screen()).toMatch(
      /✓ notes › add_note title: "second", body: "b" (\d+ ms|\d+\.\d s) \(\+(\d+ ms|\d+\.\d s) approving\)/,
    );
    const result = c.events.find((e) => e.type === 'tool-result' && e.callId === 'c2');
    if (result?.type !== 'tool-result') throw new Error('no result for c2');
    expect(result.waitMs).toBeGreaterThanOrEqual(400);
    // The call ran between the answer and the reply on screen (bounds taken here, not a fixed figure that a
    // loaded machine could pass).
    expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(seen - answered));
  });

  it('shows a changed pinned definition as a diff dialog; n keeps it held', async () => {
    const p = scope.project('tack-tui-');
    const rug = { rug: fixtureEntry('attack-server.js', ['--role', 'rugpull']) };
    const add = (id: string) => ({ toolCalls: [{ id, name: 'mcp__rug__add', input: { a: 1, b: 2 } }] });
    const c = await chat(p, [add('c1'), { text: 'It is 3.' }, { text: 'No add tool now.' }], rug);
    await send(c, 'add');
    await c.waitFor('Approve rug › add?');
    c.type('y');
    // The server changes the tool after the call: before the next step (of this run, or of the next one when
    // its list_changed comes in later) the user sees the diff.
    await c.waitFor(/It is 3\.|Accept this tool/);
    if (!c.screen().includes('Accept this tool')) await send(c, 'again');
    await c.waitFor('Accept this tool and use it?');
    expect(c.screen()).toContain('rug: tool add changed since it was approved');
    expect(c.screen()).toMatch(/\+ {2}"description": "Add two numbers\. <IMPORTANT>/);
    c.type('n');
    await c.waitFor(/No add tool now\.|It is 3\./);
    expect(c.agent.session.held.map((held) => held.name)).toContain('add');
  });

  it('nests a sub-agent’s tool calls under the task call that started it', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [
      {
        toolCalls: [
          {
            id: 't1',
            name: 'task',
            input: { description: 'check the weather', prompt: 'Forecast for Lisbon?' },
          },
        ],
      },
      // The sub-agent's own steps, on the same model server.
      { toolCalls: [{ id: 's1', name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
      { text: 'Lisbon is sunny.' },
      { text: 'The sub-agent says: sunny.' },
    ]);
    await send(c, 'delegate');
    await c.waitFor('The sub-agent says: sunny.');
    const lines = c.screen().split('\n');
    const task = lines.findIndex((l) => l.includes('✓ task'));
    const sub = lines.findIndex((l) => l.includes('sub-agent: check the weather'));
    const inner = lines.findIndex((l) => /│ ✓ weather › get_forecast city: "Lisbon"/.test(l));
    expect(task).toBeGreaterThanOrEqual(0);
    expect(sub).toBeGreaterThan(task);
    expect(inner).toBeGreaterThan(sub);
    expect(c.screen()).toMatch(/│ completed: answered after 2 steps/);
  });

  it('recalls earlier messages with the up arrow, from the store, across sessions', async () => {
    const p = scope.project('tack-tui-');
    const first = await chat(p, [{ text: 'One.' }, { text: 'Two.' }], {});
    await send(first, 'first question');
    await first.waitFor('One.');
    await send(first, 'second question');
    await first.waitFor('Two.');
    first.key(UP);
    await first.waitFor('› second question');
    first.key(UP);
    await first.waitFor(/│ › first question/);
    first.key('\u001b[B');
    first.key('\u001b[B');
    await expect.poll(() => /│ › second question/.test(first.screen())).toBe(false);
    await first.agent.close();
    const second = await chat(p, [{ text: 'Three.' }], {});
    // The kept history arrives from the store once the session has started, after the first frame.
    await new Promise((r) => setTimeout(r, 1000));
    second.key(UP);
    await second.waitFor(/│ › second question/);
    expect(await second.agent.store?.inputHistory.list(p.dir)).toEqual(['first question', 'second question']);
  });

  it('Esc interrupts the step in flight; /help lists the commands; /exit leaves', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [{ text: 'too late', delayMs: 10_000 }], {});
    await send(c, 'slow one');
    await c.waitFor(/⋯ working \d+s · \d+ tokens · Esc interrupts/);
    c.key(ESC);
    await c.waitFor('aborted: interrupted');
    await send(c, '/help');
    await c.waitFor('/compact');
    expect(c.screen()).toContain('Ctrl-O');
    await send(c, '/exit');
    await expect.poll(() => c.exited()).toBe(true);
  });

  it('/resume picks an earlier session with the arrows and Enter, shows its turns and continues it', async () => {
    const p = scope.project('tack-tui-');
    const older = await chat(p, [{ text: 'Alpha is the first letter.' }], {});
    await send(older, 'remember alpha');
    await older.waitFor('Alpha is the first letter.');
    const olderId = older.agent.session.id;
    await older.agent.close();
    // Another session between, so the picker has two and Down has somewhere to go.
    const middle = await chat(p, [{ text: 'Beta noted.' }], {});
    await send(middle, 'remember beta');
    await middle.waitFor('Beta noted.');
    await middle.agent.close();

    const c = await chat(p, [{ text: 'Gamma here.' }, { text: 'You asked me to remember alpha.' }], {});
    await send(c, 'remember gamma');
    await c.waitFor('Gamma here.');
    const gammaId = c.agent.session.id;
    await send(c, '/resume');
    await c.waitFor('Resume a session (2 in this folder)');
    // Newest first: beta under the cursor, alpha below; the session running now is not offered.
    const picker = c.screen().slice(c.screen().indexOf('Resume a session'));
    expect(picker).toMatch(/› \w+ .*remember beta/);
    expect(picker).toContain('remember alpha');
    expect(picker).not.toContain('remember gamma');
    c.key('\u001b[B');
    await c.waitFor(/› \w+ .*remember alpha/);
    c.key('\r');
    await c.waitFor(`resumed session ${olderId}`);
    // The resumed session's turns are shown after the notice; the other session's turn went to the scrollback.
    await c.waitFor(/resumed session [^\n]+\n[\s\S]*› remember alpha[\s\S]*Alpha is the first letter\./);
    const shown = c.screen();
    expect(shown.lastIndexOf('Gamma here.')).toBeLessThan(shown.indexOf(`resumed session ${olderId}`));
    expect(c.agent.session.id).toBe(olderId);
    await send(c, 'what did I ask?');
    await c.waitFor('You asked me to remember alpha.');
    // The model got the resumed session's history, and the new turn went to that session's transcript.
    const last = c.provider.requests.at(-1)!;
    expect(JSON.stringify(last.messages)).toContain('remember alpha');
    expect(JSON.stringify(last.messages)).not.toContain('remember gamma');
    const row = await c.agent.store?.sessions.get(olderId);
    expect(row).toBeDefined();
    const transcript = readFileSync(row!.file, 'utf8');
    expect(transcript).toContain('what did I ask?');
    expect(transcript).toContain('You asked me to remember alpha.');
    const gamma = await c.agent.store!.sessions.get(gammaId);
    expect(readFileSync(gamma!.file, 'utf8')).not.toContain('what did I ask?');
  });

  it('/resume <id> of no session is an error in place; the chat goes on in its own session', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [{ text: 'Before.' }, { text: 'After.' }], {});
    await send(c, 'before');
    await c.waitFor('Before.');
    const id = c.agent.session.id;
    await send(c, '/resume nosuchsession');
    await c.waitFor("cannot open session nosuchsession: no session matches 'nosuchsession'");
    await c.waitFor(`back in session ${id}`);
    await send(c, 'after');
    await c.waitFor('After.');
    expect(c.agent.session.id).toBe(id);
    expect(JSON.stringify(c.provider.requests[1]!.messages)).toContain('Before.');
    const transcript = readFileSync((await c.agent.store!.sessions.get(id))!.file, 'utf8');
    expect(transcript).toContain('After.');
  });

  it('a session resumed at start (tack chat --resume) shows its earlier turns, tool calls folded', async () => {
    const p = scope.project('tack-tui-');
    const older = await chat(p, [
      { toolCalls: [{ id: 'w1', name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
      { text: 'Lisbon is sunny.' },
    ]);
    await send(older, 'weather in Lisbon?');
    await older.waitFor('Lisbon is sunny.');
    const id = older.agent.session.id;
    await older.agent.close();
    const c = await chat(p, [{ text: 'Still sunny there.' }], SERVERS, id);
    await c.waitFor('Lisbon is sunny.');
    expect(c.screen()).toContain('› weather in Lisbon?');
    expect(c.screen()).toMatch(/✓ weather › get_forecast city: "Lisbon"/);
    // Its result came back from the history too, unwrapped, for Ctrl-O.
    c.key(CTRL_O);
    await c.waitFor('Lisbon: 16');
    expect(c.screen()).not.toContain('<tool_result');
    c.key(CTRL_O);
    await send(c, 'and now?');
    await c.waitFor('Still sunny there.');
    expect(c.agent.session.id).toBe(id);
  });

  it('/resume: Esc cancels the picker and the session stays', async () => {
    const p = scope.project('tack-tui-');
    const older = await chat(p, [{ text: 'Old.' }], {});
    await send(older, 'old one');
    await older.waitFor('Old.');
    await older.agent.close();
    const c = await chat(p, [{ text: 'Still here.' }], {});
    const id = c.agent.session.id;
    await send(c, '/resume');
    await c.waitFor('Resume a session (1 in this folder)');
    c.key(ESC);
    await expect.poll(() => c.screen().includes('Resume a session')).toBe(false);
    await send(c, 'hello');
    await c.waitFor('Still here.');
    expect(c.agent.session.id).toBe(id);
  });

  it('/model shows the model and switches it for the next turns; an unknown one is an error in place', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [{ text: 'First answer.' }, { text: 'Second answer.' }], {});
    await send(c, 'one');
    await c.waitFor('First answer.');
    const id = c.agent.session.id;
    await send(c, '/model');
    await c.waitFor('anthropic:claude-sonnet-4-5 (switch with /model <provider:id>');
    await send(c, '/model nowhere:thing');
    await c.waitFor('/model nowhere:thing: "nowhere:thing" is not a model tack knows how to reach');
    expect(c.agent.session.id).toBe(id);
    await send(c, '/model anthropic:claude-haiku-4-5');
    await c.waitFor('model anthropic:claude-haiku-4-5 from the next turn');
    // The same session, now on the other model: the status line says so, its turns are still on screen.
    await c.waitFor(/anthropic:claude-haiku-4-5 │ ctx/);
    expect(c.screen()).toContain('First answer.');
    expect(c.agent.session.id).toBe(id);
    await send(c, 'two');
    await c.waitFor('Second answer.');
    expect(c.provider.requests.map((r) => r.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
    expect(JSON.stringify(c.provider.requests[1]!.messages)).toContain('First answer.');
  });

  it('/help lists /resume and /model, and Tab completes them', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [], {});
    await send(c, '/help');
    await c.waitFor('/resume');
    expect(c.screen()).toMatch(/\/model +show the model/);
    c.type('/mo');
    await c.waitFor('/mo');
    c.key('\t');
    await c.waitFor('› /model ');
    c.key('\u0015');
    c.type('/re');
    await c.waitFor('› /re');
    c.key('\t');
    await c.waitFor('› /resume ');
  });
});
