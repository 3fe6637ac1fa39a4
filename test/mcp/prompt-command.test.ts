import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import { MAX_ATTACHMENTS } from '../../src/mcp/attachments.js';
import type { McpHost } from '../../src/mcp/host.js';
import {
  argumentAt,
  argumentWord,
  completePromptArgument,
  expandPromptCommand,
  type PromptCommand,
  parsePromptArguments,
  promptCommands,
  promptTurn,
  splitCommandWords,
} from '../../src/mcp/prompt-command.js';
import {
  completeResourceMention,
  findResourceMentions,
  resolveResourceMentions,
} from '../../src/mcp/resource-mention.js';
import { EVERYTHING, fixtureEntry, startHost, type TempProject, tempProject } from '../helpers/project.js';

// One host for the file: server-everything (prompts with arguments and completion, resources, templates) from
// npm, and a fixture that refuses to list its prompts and resources.
let project: TempProject;
let host: McpHost;
let commands: PromptCommand[];

beforeAll(async () => {
  project = tempProject('tack-prompt-command-');
  host = await startHost(project, {
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    refusing: fixtureEntry('refusing-server.js', ['--listings']),
    hostile: fixtureEntry('hostile-text-server.js'),
  });
  commands = promptCommands(host.catalog);
}, 60_000);

afterAll(async () => {
  await host?.close();
  project?.[Symbol.dispose]();
});

const command = (name: string) => commands.find((c) => c.command === name)!;

describe('prompt commands', () => {
  it("names every prompt /mcp__<server>__<prompt>, as Claude Code does, and the server's prompt stays its own", () => {
    const names = commands.map((c) => c.command);
    expect(names).toContain('/mcp__everything__args-prompt');
    expect(names).toContain('/mcp__everything__completable-prompt');
    expect(command('/mcp__everything__args-prompt').prompt.name).toBe('args-prompt');
    expect(command('/mcp__everything__args-prompt').server).toBe('everything');
  });

  it('splits name=value pairs and positional words, quotes grouping and escaping', () => {
    expect(splitCommandWords(`city="New York" 'a b' x=1 "q=\\"z\\"" plain`)).toEqual([
      { name: 'city', value: 'New York', start: 0 },
      { value: 'a b', start: 16 },
      { name: 'x', value: '1', start: 22 },
      { value: 'q="z"', start: 26 },
      { value: 'plain', start: 36 },
    ]);
    // An unclosed quote runs to the end: the person is still typing it.
    expect(splitCommandWords('city="San Fr')).toEqual([{ name: 'city', value: 'San Fr', start: 0 }]);
  });

  it('fills named arguments, then the rest in declared order; extra words join the last argument', () => {
    const args = command('/mcp__everything__args-prompt');
    expect(parsePromptArguments(args, 'state=CA city="San Francisco"')).toEqual({
      city: 'San Francisco',
      state: 'CA',
    });
    expect(parsePromptArguments(args, 'Lisbon')).toEqual({ city: 'Lisbon' });
    expect(parsePromptArguments(args, 'state=Texas Austin')).toEqual({ city: 'Austin', state: 'Texas' });
    expect(parsePromptArguments(args, 'Portland Oregon US')).toEqual({
      city: 'Portland',
      state: 'Oregon US',
    });
  });

  it('names the missing required arguments, an unknown argument, and the usage', () => {
    const args = command('/mcp__everything__args-prompt');
    const missing = (() => {
      try {
        parsePromptArguments(args, 'state=CA');
      } catch (error) {
        return error;
      }
    })();
    expect(TackError.isInstance(missing)).toBe(true);
    expect((missing as TackError).message).toBe(
      '/mcp__everything__args-prompt needs argument city (Name of the city)',
    );
    expect((missing as TackError).hint).toContain(
      '/mcp__everything__args-prompt city=<city> [state=<state>]',
    );
    expect(() => parsePromptArguments(args, 'town=Lisbon')).toThrow(
      '/mcp__everything__args-prompt: no argument named "town"',
    );
    const both = command('/mcp__everything__completable-prompt');
    expect(() => parsePromptArguments(both, '')).toThrow('needs arguments department');
  });

  it("runs a prompt: its messages become the user's turn", async () => {
    const expanded = await expandPromptCommand(
      host,
      '/mcp__everything__args-prompt city="New York" state=NY',
    );
    expect(expanded?.text).toBe("What's weather in New York, NY?");
    const positional = await expandPromptCommand(host, '/mcp__everything__args-prompt Lisbon');
    expect(positional?.text).toBe("What's weather in Lisbon?");
    expect(await expandPromptCommand(host, '/help')).toBeUndefined();
  });

  it("attaches a prompt's embedded text resource and notes a binary one without inlining it", async () => {
    const text = await expandPromptCommand(host, '/mcp__everything__resource-prompt Text 3');
    expect(text?.text).toContain('This prompt includes the Text resource with id: 3');
    expect(text?.text).toMatch(
      /<resource uri="demo:\/\/resource\/dynamic\/text\/3" mimeType="text\/plain">\nResource 3: This is a plaintext resource/,
    );
    expect(text?.notes).toContain('attached demo://resource/dynamic/text/3');
    const blob = await expandPromptCommand(
      host,
      '/mcp__everything__resource-prompt resourceType=Blob resourceId=2',
    );
    expect(blob?.text).toMatch(
      /\[resource demo:\/\/resource\/dynamic\/blob\/2: text\/plain, \d+ bytes, binary, not inlined\]/,
    );
    expect(blob?.text).not.toContain('base64 blob');
  });

  it('refuses a held prompt before asking its server', async () => {
    await expect(
      expandPromptCommand(host, '/mcp__everything__simple-prompt', {
        held: [
          { server: 'everything', kind: 'prompt', name: 'simple-prompt', reason: 'changed since approved' },
        ],
      }),
    ).rejects.toThrow('prompt simple-prompt of everything is held back: changed since approved');
  });

  it('notes images and cuts text past the limit', () => {
    const turn = promptTurn({
      messages: [
        { role: 'user', content: { type: 'text', text: 'x'.repeat(150_000) } },
        { role: 'assistant', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
      ],
    });
    expect(turn.text.length).toBeLessThanOrEqual(100_000);
    expect(turn.notes).toContain("the prompt's image (image/png) is noted, not inlined");
    expect(turn.notes).toContain("the prompt's text was cut at 100000 characters");
  });
});

describe('prompt argument completion', () => {
  it('finds the argument at the cursor, named or positional, with the ones already given', () => {
    const named = argumentAt(commands, '/mcp__everything__completable-prompt department=Eng');
    expect(named).toMatchObject({ argument: { name: 'department' }, value: 'Eng', named: true, given: {} });
    const positional = argumentAt(commands, '/mcp__everything__completable-prompt Sales ');
    expect(positional).toMatchObject({ argument: { name: 'name' }, value: '', named: false });
    expect(positional?.given).toEqual({ department: 'Sales' });
    expect(argumentAt(commands, '/mcp__everything__simple-prompt ')).toBeUndefined();
    expect(argumentAt(commands, 'hello /mcp__everything__args-prompt ')).toBeUndefined();
  });

  it("asks the server's completion/complete, with the other arguments as context", async () => {
    const department = argumentAt(commands, '/mcp__everything__completable-prompt department=Eng')!;
    expect(await completePromptArgument(host, department)).toEqual(['Engineering']);
    expect(argumentWord(department, 'Engineering')).toBe('department=Engineering');
    const lead = argumentAt(commands, '/mcp__everything__completable-prompt Sales ')!;
    expect(await completePromptArgument(host, lead)).toEqual(['David', 'Eve', 'Frank']);
    expect(argumentWord(lead, 'Mary Ann')).toBe('"Mary Ann"');
  });

  it('gives nothing, quickly, when a server cannot complete', async () => {
    const target = {
      command: { command: '/mcp__refusing__x', server: 'refusing', prompt: { name: 'x' } },
      argument: { name: 'a' },
      value: '',
      named: false,
      given: {},
    };
    const started = Date.now();
    expect(await completePromptArgument(host, target, { timeoutMs: 300 })).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('resource mentions', () => {
  it('finds @server:uri for configured servers only, without trailing punctuation or repeats', () => {
    const found = findResourceMentions(
      'see @everything:demo://resource/dynamic/text/1, @nosuch:x and @everything:demo://resource/dynamic/text/1.',
      (name) => host.has(name),
    );
    expect(found).toEqual([
      {
        server: 'everything',
        uri: 'demo://resource/dynamic/text/1',
        raw: 'everything:demo://resource/dynamic/text/1',
      },
    ]);
  });

  it('attaches a text resource, notes a binary one, and says why one is not read', async () => {
    const resolved = await resolveResourceMentions(
      host,
      'compare @everything:demo://resource/dynamic/text/7 with @everything:demo://resource/dynamic/blob/7 ' +
        'and @everything:demo://resource/dynamic/text/{resourceId} and @everything:nope://x',
    );
    expect(resolved.attachments).toHaveLength(2);
    expect(resolved.attachments[0]).toMatch(
      /^<resource server="everything" uri="demo:\/\/resource\/dynamic\/text\/7" mimeType="text\/plain">\nResource 7: /,
    );
    expect(resolved.attachments[1]).toMatch(/binary, not inlined\]$/);
    expect(resolved.notes).toContain(
      "@everything:demo://resource/dynamic/text/{resourceId} not attached: fill in {resourceId} (a template's variables take values)",
    );
    expect(resolved.notes.some((n) => n.startsWith('@everything:nope://x not attached: '))).toBe(true);
  });

  it(`attaches at most ${MAX_ATTACHMENTS} resources per message`, async () => {
    const message = [1, 2, 3, 4, 5, 6].map((i) => `@everything:demo://resource/dynamic/text/${i}`).join(' ');
    const resolved = await resolveResourceMentions(host, message);
    expect(resolved.attachments).toHaveLength(MAX_ATTACHMENTS);
    expect(resolved.notes).toContain(
      `@everything:demo://resource/dynamic/text/6 not attached: at most ${MAX_ATTACHMENTS} attachments per message`,
    );
  });

  it('completes servers that offer resources, then their resources and templates', () => {
    expect(completeResourceMention(host.catalog, '@ev')).toEqual(['@everything:']);
    expect(completeResourceMention(host.catalog, '@ref')).toEqual([]);
    expect(completeResourceMention(host.catalog, '@everything:demo://resource/dynamic/')).toEqual([
      '@everything:demo://resource/dynamic/text/{resourceId}',
      '@everything:demo://resource/dynamic/blob/{resourceId}',
    ]);
    const statics = completeResourceMention(host.catalog, '@everything:demo://resource/static/');
    expect(statics.length).toBeGreaterThan(0);
    expect(statics.every((s) => s.startsWith('@everything:demo://resource/static/document/'))).toBe(true);
  });
});

describe('a server that cannot list its prompts or resources', () => {
  it('stays up without them and says why in one line', () => {
    const refusing = host.servers().find((s) => s.name === 'refusing')!;
    expect(refusing.status).toBe('connected');
    expect(refusing.counts.tools).toBe(1);
    expect(refusing.diagnostics).toContainEqual(
      expect.stringMatching(
        /^listing prompts failed, so none are offered: .*prompts\/list refused on purpose/,
      ),
    );
    expect(refusing.diagnostics).toContainEqual(expect.stringMatching(/^listing resources failed/));
    expect(commands.some((c) => c.server === 'refusing')).toBe(false);
  });
});

describe('a server whose names and URIs carry terminal controls', () => {
  it('gets a command name inside [A-Za-z0-9_-], and no URI with controls is offered to be typed in', async () => {
    const hostile = commands.filter((c) => c.server === 'hostile');
    expect(hostile).toHaveLength(1);
    expect(hostile[0]!.command).toMatch(/^\/mcp__hostile__[A-Za-z0-9_-]+$/);
    expect(completeResourceMention(host.catalog, '@hos')).toEqual(['@hostile:']);
    // The readme's URI is percent-encoded (offered); the template's holds the raw controls (left out).
    const offered = completeResourceMention(host.catalog, '@hostile:note://');
    expect(offered.some((c) => c.startsWith('@hostile:note://readme/'))).toBe(true);
    expect(offered.some((c) => c.startsWith('@hostile:note://t/'))).toBe(false);
    for (const word of ['@hos', '@hostile:', '@hostile:note://']) {
      for (const completion of completeResourceMention(host.catalog, word))
        expect(completion).toMatch(/^[\x20-\x7e]+$/);
    }
    // Its prompt still runs under that name, and its text is the server's (the screen makes it printable).
    const expanded = await expandPromptCommand(host, hostile[0]!.command);
    expect(expanded?.text).toContain('prompt-message');
  });
});
