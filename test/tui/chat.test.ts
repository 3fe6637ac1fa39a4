import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import { describe, expect, it } from 'vitest';
import { type RunningAgent, secretMaskerFor, startAgent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { resolveModel } from '../../src/agent/model.js';
import { ChatApp } from '../../src/tui/app.js';
import { theme } from '../../src/tui/components.js';
import { type ChatTui, createChatTui } from '../../src/tui/run.js';
import { unwrapResult } from '../../src/tui/transcript-view.js';
import { type FakeScript, providerEnv } from '../helpers/fake-provider.js';
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
  agent: RunningAgent;
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
): Promise<Chat> {
  const provider = await fake(script);
  const config = p.config(servers);
  const tui = createChatTui();
  const events: AgentEvent[] = [];
  const agent = await startAgent({
    config,
    model: resolveModel('anthropic:claude-sonnet-4-5', providerEnv(provider)),
    cwd: p.dir,
    env: p.env,
    approver: tui.approver,
    interaction: tui.interaction,
    session: { pins: { reviewer: tui.reviewer }, maxRetries: 0 },
    onEvent: (event) => {
      events.push(event);
      tui.onEvent(event);
    },
  });
  cleanups.push(() => agent.close());
  let left = false;
  const ui = render(
    h(ChatApp, {
      agent,
      view: tui.view,
      dialogs: tui.dialogs,
      window: 200_000,
      cwd: p.dir,
      history: agent.store?.inputHistory,
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
    agent,
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

  it('folds a tool call to one line and expands it with Ctrl-O, never showing the <tool_result> wrapper', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [
      { toolCalls: [{ name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] },
      { text: 'Sunny in Lisbon.' },
    ]);
    await send(c, 'weather?');
    await c.waitFor('Sunny in Lisbon.');
    const folded = c.screen();
    expect(folded).toMatch(/✓ weather › get_forecast city: "Lisbon" \d+ ms/);
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
    c.type('y');
    await c.waitFor('Noted.');
    expect(c.screen()).toMatch(/✓ notes › add_note title: "second", body: "b" \d+ ms \(\+\d+ ms approving\)/);
    const result = c.events.find((e) => e.type === 'tool-result' && e.callId === 'c2');
    if (result?.type !== 'tool-result') throw new Error('no result for c2');
    expect(result.waitMs).toBeGreaterThanOrEqual(400);
    expect(result.durationMs).toBeLessThan(result.waitMs!);
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
    second.key(UP);
    await second.waitFor(/│ › second question/);
    expect(await second.agent.store?.inputHistory.list(p.dir)).toEqual(['first question', 'second question']);
  });

  it('Esc interrupts the step in flight; /help lists the commands; /exit leaves', async () => {
    const p = scope.project('tack-tui-');
    const c = await chat(p, [{ text: 'too late', delayMs: 10_000 }], {});
    await send(c, 'slow one');
    await c.waitFor('working…');
    c.key(ESC);
    await c.waitFor('aborted: interrupted');
    await send(c, '/help');
    await c.waitFor('/compact');
    expect(c.screen()).toContain('Ctrl-O');
    await send(c, '/exit');
    await expect.poll(() => c.exited()).toBe(true);
  });
});
