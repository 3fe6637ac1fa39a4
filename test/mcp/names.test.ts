import { describe, expect, it } from 'vitest';
import { assignToolNames, MAX_TOOL_NAME_LENGTH, sanitizeToolName } from '../../src/mcp/names.js';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

describe('model-visible tool names', () => {
  it('are mcp__<server>__<tool> when the name needs no change', () => {
    expect(sanitizeToolName('github', 'create_issue')).toEqual({
      name: 'mcp__github__create_issue',
      lossy: false,
    });
    expect(sanitizeToolName('every-thing', 'get-sum').name).toBe('mcp__every-thing__get-sum');
  });

  it('replace characters providers reject with "_"', () => {
    expect(sanitizeToolName('fs', 'read.file')).toEqual({ name: 'mcp__fs__read_file', lossy: true });
    expect(sanitizeToolName('fs', 'a/b c').name).toBe('mcp__fs__a_b_c');
  });

  it('cut names over 64 characters and end them with a hash of the full name', () => {
    const tool = `summarize_${'very_'.repeat(20)}long`;
    const { name, lossy } = sanitizeToolName('docs', tool);
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(VALID);
    expect(name).toMatch(/^mcp__docs__summarize_very_.*_[0-9a-f]{8}$/);
    expect(lossy).toBe(true);
    // Two long names sharing their first 64 characters stay apart, and the mapping is stable across runs.
    const other = sanitizeToolName('docs', `${tool}_v2`).name;
    expect(other).not.toBe(name);
    expect(sanitizeToolName('docs', tool).name).toBe(name);
  });

  it('never let two servers with the same tool name shadow each other', () => {
    const names = assignToolNames([
      { server: 'github', tool: 'search' },
      { server: 'gitlab', tool: 'search' },
    ]);
    expect([...names.keys()]).toEqual(['mcp__github__search', 'mcp__gitlab__search']);
    expect(names.get('mcp__gitlab__search')).toEqual({ server: 'gitlab', tool: 'search' });
  });

  it('give a hash to sanitized names that collide, and keep the exact name unchanged', () => {
    const names = assignToolNames([
      { server: 's', tool: 'get.weather' },
      { server: 's', tool: 'get_weather' },
      { server: 's', tool: 'get/weather' },
    ]);
    const keys = [...names.keys()];
    expect(keys).toHaveLength(3);
    expect(keys).toContain('mcp__s__get_weather');
    expect(names.get('mcp__s__get_weather')?.tool).toBe('get_weather');
    for (const key of keys) expect(key).toMatch(VALID);
    // Independent of order: the same catalog reversed gives the same names.
    const reversed = assignToolNames([
      { server: 's', tool: 'get/weather' },
      { server: 's', tool: 'get_weather' },
      { server: 's', tool: 'get.weather' },
    ]);
    expect(new Set(reversed.keys())).toEqual(new Set(keys));
  });

  it('keep non-ASCII tool names apart (two Chinese names both sanitize to underscores)', () => {
    const names = assignToolNames([
      { server: 'cn', tool: '搜索' },
      { server: 'cn', tool: '读取' },
      { server: 'cn', tool: 'café' },
    ]);
    const keys = [...names.keys()];
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).toMatch(VALID);
    expect(keys.find((k) => names.get(k)?.tool === 'café')).toBe('mcp__cn__caf_');
    const search = keys.find((k) => names.get(k)?.tool === '搜索');
    const read = keys.find((k) => names.get(k)?.tool === '读取');
    expect(search).toMatch(/^mcp__cn_____[0-9a-f]{8}$/);
    expect(search).not.toBe(read);
  });
});
