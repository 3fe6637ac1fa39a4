import { describe, expect, it } from 'vitest';
import { parseTomlSubset } from '../../src/config/toml-subset.js';

describe("the TOML reader for Codex's config.toml", () => {
  it('reads tables, dotted and quoted keys, strings, numbers, booleans, arrays and inline tables', () => {
    const text = [
      'top = 1 # comment',
      '[mcp_servers."my-server"]',
      'command = "np\\u0078"',
      'args = [\'-y\', "a\\tb",',
      '  ] ',
      'env.KEY = "v"',
      'enabled = false',
      'timeout = 1_000.5',
      'nested = { a = { b = [1, 2] } }',
      'text = """',
      'line one \\',
      '   continued"""',
      "raw = '''C:\\path'''",
      '[[profiles]]',
      'name = "left out"',
    ].join('\n');
    expect(parseTomlSubset(text)).toEqual({
      top: 1,
      mcp_servers: {
        'my-server': {
          command: 'npx',
          args: ['-y', 'a\tb'],
          env: { KEY: 'v' },
          enabled: false,
          timeout: 1000.5,
          nested: { a: { b: [1, 2] } },
          text: 'line one continued',
          raw: 'C:\\path',
        },
      },
    });
  });

  it('stops at what it does not read, naming the line', () => {
    expect(() => parseTomlSubset('a = 1\nb = 1979-05-27')).toThrow(/^line 2: expected a string, number/);
    expect(() => parseTomlSubset('a = "open\n')).toThrow(/^line 1: unterminated string/);
    expect(() => parseTomlSubset('a = 1\na = 2')).toThrow(/^line 2: "a" is defined twice/);
    expect(() => parseTomlSubset('[a]\nx = 1\n[a.x]')).toThrow(/^line 3: \[a\.x\]: "x" is already a value/);
    expect(() => parseTomlSubset('a = 1 b = 2')).toThrow(/^line 1: expected the end of the line/);
  });

  it('is not turned against itself: __proto__ is a key like any other, and deep nesting is refused', () => {
    const parsed = parseTomlSubset('[__proto__]\npolluted = true\n[x]\n__proto__ = { polluted = true }');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(parsed)).toEqual(['__proto__', 'x']);
    expect(() => parseTomlSubset(`a = ${'['.repeat(10_000)}`)).toThrow(/nested deeper than 32 levels/);
    expect(() => parseTomlSubset(`a = ${'{ b = '.repeat(10_000)}`)).toThrow(/nested deeper than 32 levels/);
  });
});
