import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_COMMANDS } from '../../src/agent/user-turn.js';
import { COMMANDS } from '../../src/tui/commands.js';
import { ptyTack } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { EVERYTHING, fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';
import { screenTack } from '../helpers/screen.js';

const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
const scope = testScope();
const { cleanups, fake } = scope;

/** The text of the last user message the model was sent (Anthropic's content blocks joined). */
function lastUserText(messages: Array<{ role: string; content: unknown }>): string {
  const content = messages.filter((m) => m.role === 'user').at(-1)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((block: { type?: string; text?: string }) => (block.type === 'text' ? block.text : ''))
    .join('');
}

describe('prompts, skills and resources in the real tack chat', () => {
  it("knows the chat's built-in commands, so a skill never takes one's name", () => {
    expect([...BUILT_IN_COMMANDS].sort()).toEqual([...COMMANDS.map((c) => c.name), '/quit'].sort());
  });

  it('runs a prompt command with arguments, a skill command and an @server:uri mention; the model gets their text', async () => {
    const p = scope.project('tack-tui-user-commands-');
    p.write('tack.json', {
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        refusing: fixtureEntry('refusing-server.js', ['--listings']),
      },
    });
    mkdirSync(join(p.dir, '.agents', 'skills', 'haiku'), { recursive: true });
    p.write(
      '.agents/skills/haiku/SKILL.md',
      '---\nname: haiku\ndescription: Answer in a haiku.\n---\nAnswer in exactly three lines of 5, 7 and 5 syllables.\n',
    );
    const provider = await fake([
      { text: 'Sunny in New York.' },
      { text: 'Resource five read.' },
      { text: 'Old pond, frog jumps in.' },
    ]);
    const s = screenTack(['chat', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      cols: 140,
      rows: 50,
      onStart: (kill) => cleanups.push(kill),
    });
    await s.waitFor('servers 2 up', 30_000);
    // The server that cannot list its prompts serves on without them, and says so in one line.
    await s.waitFor('refusing: listing prompts failed, so none are offered');

    // /help lists the prompt commands with their arguments, and the skills.
    s.keys('/help');
    await s.waitFor('/help');
    s.keys('\r');
    await s.waitFor('/mcp__everything__args-prompt city=<city> [state=<state>]');
    expect(s.screen()).toMatch(/\/haiku +skill: Answer in a haiku\./);
    expect(s.screen()).toContain(
      '    prompt of everything: A prompt with two arguments, one required and one optional',
    );

    // Tab completes the command, then the argument through the server's completion/complete.
    // (Read off the input box's line: /help's list above holds the same names.)
    s.keys('/mcp__everything__compl');
    await s.waitFor(/│ › \/mcp__everything__compl +│/);
    s.keys('\t');
    await s.waitFor(/│ › \/mcp__everything__completable-prompt +│/);
    s.keys('department=Eng');
    await s.waitFor('department=Eng');
    s.keys('\t');
    await s.waitFor(/│ › \/mcp__everything__completable-prompt department=Engineering +│/);
    s.keys('\u0015'); // Ctrl-U: clear the line
    await s.waitFor(/message, \/help, @file +│\n(?:╰[^\n]*\n)?anthropic:/);

    // A required argument left out: said, and nothing is sent.
    s.keys('/mcp__everything__args-prompt state=NY');
    await s.waitFor('args-prompt state=NY');
    s.keys('\r');
    await s.waitFor('needs argument city (Name of the city)');
    expect(provider.requests).toHaveLength(0);

    s.keys('/mcp__everything__args-prompt "New York" state=NY');
    await s.waitFor('args-prompt "New York" state=NY');
    s.keys('\r');
    await s.waitFor('Sunny in New York.');
    expect(lastUserText(provider.requests[0]!.messages)).toBe("What's weather in New York, NY?");

    s.keys('summarise @everything:demo://resource/dynamic/text/5 please');
    await s.waitFor('text/5 please');
    s.keys('\r');
    await s.waitFor('Resource five read.');
    expect(s.screen()).toContain('attached demo://resource/dynamic/text/5');
    const sent = lastUserText(provider.requests[1]!.messages);
    expect(sent).toContain('summarise @everything:demo://resource/dynamic/text/5 please');
    expect(sent).toMatch(
      /<resource server="everything" uri="demo:\/\/resource\/dynamic\/text\/5" mimeType="text\/plain">\nResource 5: This is a plaintext resource/,
    );

    s.keys('/haiku about ponds');
    await s.waitFor('/haiku about ponds');
    s.keys('\r');
    await s.waitFor('Old pond, frog jumps in.');
    const skill = lastUserText(provider.requests[2]!.messages);
    expect(skill).toContain('<skill name="haiku"');
    expect(skill).toContain('Answer in exactly three lines of 5, 7 and 5 syllables.');
    expect(skill).toMatch(/<\/skill>\n\nabout ponds$/);
    expect(s.screen()).toContain('activated skill haiku');

    s.keys('\u0004');
    expect(await s.exited()).toBe(0);
  }, 90_000);

  it('the line mode runs the same prompt commands and mentions', async () => {
    const p = scope.project('tack-tui-user-commands-plain-');
    p.write('tack.json', {
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    const provider = await fake([{ text: 'Plain prompt done.' }, { text: 'Plain mention done.' }]);
    const chat = ptyTack(['chat', '--plain', ...MODEL], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      onStart: (kill) => cleanups.push(kill),
    });
    await chat.waitFor('/exit');
    chat.type('/mcp__everything__args-prompt');
    await chat.waitFor('needs argument city');
    chat.type('/mcp__everything__args-prompt Lisbon');
    await chat.waitFor('Plain prompt done.');
    expect(lastUserText(provider.requests[0]!.messages)).toBe("What's weather in Lisbon?");
    chat.type('read @everything:demo://resource/dynamic/text/2');
    await chat.waitFor('Plain mention done.');
    expect(lastUserText(provider.requests[1]!.messages)).toContain(
      'Resource 2: This is a plaintext resource',
    );
    expect(provider.requests).toHaveLength(2);
    chat.type('/exit');
    expect(await chat.exited()).toBe(0);
  }, 60_000);
});
