import { describe, expect, it } from 'vitest';
import {
  assignToolNames,
  MAX_TOOL_NAME_LENGTH,
  sanitizeToolName,
  serverOfToolName,
} from '../../src/mcp/names.js';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

describe('model-visible tool names', () => {
  it('are mcp__<server>__<tool> when the name needs no change', () => {
    expect(sanitizeToolName('github', 'create_issue')).toEqual({
      name: 'mcp__github__create_issue',
      lossy: false,
    });
    expect(sanitizeToolName('every-thing', 'get-sum').name).toBe('mcp__every-thing__get-sum');
  });

  it('replace characters providers reject and end with a hash of the original', () => {
    const { name, lossy } = sanitizeToolName('fs', 'read.file');
    expect(lossy).toBe(true);
    expect(name).toMatch(/^mcp__fs__read_file_[0-9a-f]{8}$/);
    // Stable across runs: a pure function of server and tool.
    expect(sanitizeToolName('fs', 'read.file').name).toBe(name);
  });

  it('cut names over 64 characters and end them with a hash of the full name', () => {
    const tool = `summarize_${'very_'.repeat(20)}long`;
    const { name, lossy } = sanitizeToolName('docs', tool);
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(VALID);
    expect(name).toMatch(/^mcp__docs__summarize_very_.*_[0-9a-f]{8}$/);
    expect(lossy).toBe(true);
    expect(sanitizeToolName('docs', `${tool}_v2`).name).not.toBe(name);
  });

  it('never let two servers with the same tool name shadow each other', () => {
    const names = assignToolNames([
      { server: 'github', tool: 'search' },
      { server: 'gitlab', tool: 'search' },
    ]);
    expect(Object.fromEntries([...names].map(([name, t]) => [name, t.server]))).toEqual({
      mcp__github__search: 'github',
      mcp__gitlab__search: 'gitlab',
    });
  });

  it('keep a sanitized name apart from a real tool of that name, whichever comes first', () => {
    const tools = [
      { server: 's', tool: 'get.weather' },
      { server: 's', tool: 'get_weather' },
      { server: 's', tool: 'get/weather' },
    ];
    const forward = Object.fromEntries([...assignToolNames(tools)].map(([name, t]) => [name, t.tool]));
    const backward = Object.fromEntries(
      [...assignToolNames([...tools].reverse())].map(([name, t]) => [name, t.tool]),
    );
    expect(forward).toEqual(backward);
    expect(forward.mcp__s__get_weather).toBe('get_weather');
    expect(Object.keys(forward)).toHaveLength(3);
    for (const name of Object.keys(forward)) expect(name).toMatch(VALID);
    // The name `get.weather` had before `get_weather` existed is the name it still has.
    const alone = assignToolNames([{ server: 's', tool: 'get.weather' }]);
    expect([...alone.keys()][0]).toBe(Object.keys(forward).find((n) => forward[n] === 'get.weather'));
  });

  it('keep non-ASCII tool names apart (two Chinese names both sanitize to underscores)', () => {
    const names = Object.fromEntries(
      [
        ...assignToolNames([
          { server: 'cn', tool: '搜索' },
          { server: 'cn', tool: '读取' },
        ]),
      ].map(([name, t]) => [t.tool, name]),
    );
    expect(names.搜索).toMatch(/^mcp__cn_____[0-9a-f]{8}$/);
    expect(names.读取).toMatch(/^mcp__cn_____[0-9a-f]{8}$/);
    expect(names.搜索).not.toBe(names.读取);
  });

  it('give back the server a name belongs to', () => {
    expect(serverOfToolName('mcp__git-hub__create_issue')).toBe('git-hub');
    expect(serverOfToolName('mcp__s___private')).toBe('s');
    expect(serverOfToolName('search_tools')).toBeUndefined();
  });
});
