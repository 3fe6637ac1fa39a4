import { describe, expect, it } from 'vitest';
import { describeSchemaChange, schemaProperties } from '../../src/skills/tool-check.js';
import { findServerToolMentions, findToolMentions } from '../../src/skills/tool-mentions.js';

const args = (text: string) =>
  findToolMentions(text, 1).map((m) => [m.name, m.line, m.args.map((a) => a.name)] as const);

describe('tool names and their arguments in a skill', () => {
  it('finds model-visible names with the arguments written next to them', () => {
    expect(
      args(
        [
          'Call mcp__github__list_pull_requests with `state: open` and `repo=acme/web`.',
          'Then `mcp__github__get_issue` with `number` and `repo`.',
          'Or mcp__github__search(query="is:open", per_page=5).',
          'The `owner` argument of mcp__github__get_repo is optional, and mcp__github__get_repo takes the `name` parameter.',
        ].join('\n'),
      ),
    ).toEqual([
      ['mcp__github__list_pull_requests', 1, ['state', 'repo']],
      ['mcp__github__get_issue', 2, ['number', 'repo']],
      ['mcp__github__search', 3, ['query', 'per_page']],
      ['mcp__github__get_repo', 4, []],
      ['mcp__github__get_repo', 4, ['name']],
    ]);
  });

  it('reads a JSON block the line introduces, or a whole call in a block', () => {
    const text = [
      'Call mcp__gh__add_comment with:',
      '',
      '```json',
      '{ "repo": "acme/web", "number": 4, "body": "LGTM" }',
      '```',
      '```json',
      '{ "name": "mcp__gh__get_issue", "arguments": { "repo": "acme/web", "number": 4 } }',
      '```',
    ].join('\n');
    expect(args(text)).toEqual([
      ['mcp__gh__add_comment', 1, ['repo', 'number', 'body']],
      ['mcp__gh__get_issue', 7, ['repo', 'number']],
    ]);
  });

  it('takes no values, prose or example documents for arguments', () => {
    expect(
      args(
        [
          'Use mcp__gh__list_pull_requests when asked. Check `true` or `open` afterwards.',
          'mcp__gh__list_pull_requests returns `https://x.y/z` links and `status: ok`.',
          'Call mcp__gh__get_issue:',
          '```python',
          'print({"not": "arguments"})',
          '```',
          '```markdown',
          'Call mcp__gh__example with `state: open`',
          '```',
          'Wildcards such as mcp__gh__* or a word like xmcp__a__b are not names.',
        ].join('\n'),
      ),
    ).toEqual([
      ['mcp__gh__list_pull_requests', 1, []],
      ['mcp__gh__list_pull_requests', 2, []],
      ['mcp__gh__get_issue', 3, []],
    ]);
  });

  it("reads a server's own tool name only in code, right next to a connected server's name", () => {
    const found = findServerToolMentions(
      [
        "Use the `github` server's `list_pull_requests` tool with `state: open`.",
        "Then github's `get_issue` and the `add_comment` tool of the github server.",
        "Not: github's `README.md`, github's `search` (no word tool), the gitlab server's `list_pull_requests` tool,",
        "list_pull_requests of the github server, or mygithub's `get_issue` tool.",
        '```',
        "the github server's `in_a_block` tool",
        '```',
      ].join('\n'),
      1,
      ['github'],
      (server, tool) => `mcp__${server}__${tool}`,
    );
    expect(found.map((m) => [m.name, m.line, m.args.map((a) => a.name)])).toEqual([
      ['mcp__github__list_pull_requests', 1, ['state']],
      ['mcp__github__get_issue', 2, []],
      ['mcp__github__add_comment', 2, []],
    ]);
  });

  it('says what changed in a schema: renamed, removed, added, retyped, required', () => {
    const before = {
      type: 'object',
      properties: { state: { type: 'string' }, repo: { type: 'string' }, limit: { type: 'number' } },
      required: ['repo'],
    };
    expect(
      describeSchemaChange(before, {
        ...before,
        properties: { status: { type: 'string' }, repo: { type: 'string' }, limit: { type: 'string' } },
        required: ['repo', 'limit'],
      }),
    ).toEqual([
      "parameter 'state' renamed to 'status'",
      "parameter 'limit' type number -> string",
      "parameter 'limit' now required",
    ]);
    expect(describeSchemaChange(before, { ...before, properties: { repo: { type: 'string' } } })).toEqual([
      "parameter 'state' removed",
      "parameter 'limit' removed",
    ]);
    // A schema that lets any name through cannot make an argument wrong.
    expect(
      schemaProperties({ type: 'object', properties: { a: {} }, additionalProperties: true }),
    ).toBeUndefined();
    expect(schemaProperties({ type: 'object' })).toBeUndefined();
  });
});
