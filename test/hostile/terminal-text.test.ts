import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sanitizeToolName } from '../../src/mcp/names.js';
import { TackStore } from '../../src/store/store.js';
import { hostile } from '../fixtures/servers/hostile-text-server.js';
import { ptyTack } from '../helpers/cli.js';
import { type FakeProvider, providerEnv, startFakeProvider, toolResults } from '../helpers/fake-provider.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Issue 28, defect 7: every CLI command that prints what a server, a model, a client or a file wrote, run in a real
 * pseudo-terminal against the hostile-text server (escape sequences, C0 and C1 controls, bidi overrides and
 * invisible characters in every field). With NO_COLOR and TERM=dumb tack writes no control byte of its own, so any
 * control byte on the terminal came from outside.
 */

/**
 * What a terminal acts on or draws misleadingly: C0 controls but new line and tab (a carriage return only as the
 * terminal's own end of line), DEL, C1, bidi controls and marks, zero-width and invisible characters, line and
 * paragraph separators, tag characters.
 */
const FOREIGN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu;

/** Text quoted for a test report: JSON, and nothing outside ASCII raw (the report goes to a terminal too). */
const quote = (text: string) =>
  JSON.stringify(text).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** Where `output` has control bytes tack did not write: each run of them quoted with what surrounds it. */
function foreign(output: string): string[] {
  const text = output.replace(/\r\n/g, '\n');
  const found: string[] = [];
  let end = -1;
  for (const m of text.matchAll(FOREIGN)) {
    if (m.index > end) found.push(quote(text.slice(Math.max(0, m.index - 24), m.index + 40)));
    end = m.index + 40;
  }
  return found;
}

/**
 * The sequences tack writes itself, each where it writes it: its styles (output.ts: a verdict, the word that starts
 * a warning or an error) and the spinner (yocto-spinner: a coloured frame, the cursor hidden and shown, the line
 * redrawn in one synchronized update).
 */
const OWN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is matched.
  /\u001b\[3[13]m(BLOCK|WARN|warning:|error:)\u001b\[39m|\u001b\[36m[\u2800-\u28ff]\u001b\[39m|\u001b\[\?(25|2026)[hl]|\u001b\[(1G|0K|1A)/g;

const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
let p: TempProject;
let provider: FakeProvider;
let env: Record<string, string | undefined>;

/**
 * Runs `tack args` in a pseudo-terminal and returns everything the terminal received. Each question tack asks
 * there (`tack run` reviews held definitions at the terminal) is answered no.
 */
async function terminal(args: string[], extra: Record<string, string | undefined> = {}): Promise<string> {
  const session = ptyTack(args, { cwd: p.dir, env: { ...env, ...extra } });
  let done = false;
  const exited = session.exited().finally(() => {
    done = true;
  });
  for (let asked = 0; !done; await new Promise((r) => setTimeout(r, 50))) {
    const questions = session.output.split('[y/N]').length - 1;
    if (questions > asked) {
      asked = questions;
      session.type('n');
    }
  }
  await exited;
  // What the terminal echoed of the answers typed above.
  return session.output.replace(/\[y\/N\]: n\r+\n/g, '[y/N]: n\n');
}

/** YAML double-quoted text: every character outside printable ASCII escaped. */
function yamlQuoted(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.codePointAt(0)!;
    if (code >= 0x20 && code < 0x7f && c !== '"' && c !== '\\') out += c;
    else if (code > 0xffff) out += `\\U${code.toString(16).padStart(8, '0')}`;
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return `"${out}"`;
}

beforeAll(async () => {
  p = tempProject('tack-terminal-');
  // The model calls the hostile server's tool with hostile arguments, then answers with hostile text.
  provider = await startFakeProvider((request) =>
    toolResults(request).length === 0
      ? { toolCalls: [{ name: 'mcp__hostile__fetch', input: { url: hostile('model-arguments') } }] }
      : { text: hostile('model-answer') },
  );
  p.write('tack.json', {
    mcpServers: { hostile: fixtureEntry('hostile-text-server.js') },
    permissions: { allow: ['mcp__hostile__fetch'] },
  });
  // A skill and a knowledge bundle from somewhere else: their words are foreign too.
  const skill = join(p.dir, '.agents', 'skills', 'evil');
  mkdirSync(skill, { recursive: true });
  writeFileSync(
    join(skill, 'SKILL.md'),
    `---\nname: evil\ndescription: ${yamlQuoted(hostile('skill-description'))}\n---\n${hostile('skill-body')}\n`,
  );
  mkdirSync(join(p.dir, 'kb'));
  writeFileSync(
    join(p.dir, 'kb', 'evil.md'),
    `---\ntype: Note\ntitle: ${yamlQuoted(hostile('concept-title'))}\ndescription: ${yamlQuoted(hostile('concept-description'))}\n---\n${hostile('concept-body')}\n`,
  );
  // A gateway client names itself: the audit log keeps what it said.
  const store = TackStore.open(join(p.home, 'state', 'tack.db'));
  store.audit.record({
    at: '2026-11-29T12:00:00.000Z',
    client: `${hostile('client')} (stdio)`,
    server: 'hostile',
    tool: hostile('audit-tool'),
    argsSha256: 'a'.repeat(64),
    durationMs: 12,
    outcome: 'failed',
    detail: hostile('audit-detail'),
  });
  store.close();
  env = { ...p.env, ...providerEnv(provider), NO_COLOR: '1', FORCE_COLOR: undefined, TERM: 'dumb' };
});

afterAll(async () => {
  await provider?.close();
  p?.[Symbol.dispose]();
});

/** The model-visible name of the tool whose own name is hostile. */
const HOSTILE_TOOL = sanitizeToolName('hostile', hostile('tool-name')).name;

/** Each command, and a word its output must show (so a command that printed nothing cannot pass). */
const COMMANDS: Array<[string[], string]> = [
  [['servers'], 'server-name'],
  [['tools'], 'tool-description'],
  [['tools', '--security'], 'tool-name'],
  [['scan'], 'tool-name'],
  [['scan', '--json'], 'tool-name'],
  [['resources'], 'resource-description'],
  [['prompts'], 'prompt-description'],
  [['call', 'mcp__hostile__fetch', '{}'], 'result-text'],
  [['call', HOSTILE_TOOL, '{"q":"x"}'], 'held back'],
  [['read', `note://readme/${encodeURIComponent(hostile('uri'))}`, '--allow-changed'], 'resource-text'],
  [['prompt', 'hostile', hostile('prompt-name'), '--allow-changed'], 'prompt-message'],
  [['audit'], 'client'],
  [['pins', 'list', '--check'], 'hostile'],
  [['pins', 'diff'], 'instructions'],
  [['run', 'fetch it', ...MODEL], 'model-answer'],
  [['run', 'fetch it', '--json', ...MODEL], 'model-answer'],
  [['skills', 'index'], 'skill-description'],
  [['skills', 'show', 'evil'], 'skill-description'], // held by the skill scan: the refusal quotes it
  [['knowledge', 'show', 'evil', '-b', 'kb'], 'concept-body'],
];

describe.concurrent('hostile text reaches the terminal only as printable text', () => {
  it.each(COMMANDS.map(([args, word]) => ({ command: quote(args.join(' ')).slice(0, 60), args, word })))(
    'tack $command',
    async ({ args, word }) => {
      const output = await terminal(args);
      expect(output.includes(word), quote(output.slice(0, 3000))).toBe(true);
      expect(foreign(output)).toEqual([]);
    },
    60_000,
  );

  it('tack scan in colour: only the styles and the spinner tack draws itself', {
    timeout: 60_000,
  }, async () => {
    const output = await terminal(['scan'], { NO_COLOR: undefined, TERM: 'xterm-256color', CI: undefined });
    expect(output).toContain('\u001b[31mBLOCK\u001b[39m hostile/tool-name<');
    expect(output).toContain('\u001b[33mwarning:\u001b[39m server "hostile" wrote non-protocol text');
    expect(output).toContain('\u001b[?25l');
    expect(foreign(output.replace(OWN, ''))).toEqual([]);
  });
});
