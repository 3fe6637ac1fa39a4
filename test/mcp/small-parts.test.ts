import { describe, expect, it } from 'vitest';
import { expandVars } from '../../src/config/expand.js';
import { matchesAny } from '../../src/mcp/tool-filter.js';
import { stdoutNoiseScanner } from '../../src/mcp/transport.js';

describe('expandVars', () => {
  it('expands set variables, applies defaults when unset or empty, and reports the missing', () => {
    const env = { A: 'x', EMPTY: '' };
    expect(expandVars('${A}/${B:-b}/${EMPTY:-e}/${A:-no}/[${EMPTY}]', env)).toEqual({
      value: 'x/b/e/x/[]',
      missing: [],
      malformed: [],
    });
    expect(expandVars('token ${MISSING} and ${ALSO}', env)).toMatchObject({
      value: 'token  and ',
      missing: ['MISSING', 'ALSO'],
    });
    expect(expandVars('$A ${not valid} ${1X} ${A:default}', env)).toEqual({
      value: '$A ${not valid} ${1X} ${A:default}',
      missing: [],
      malformed: ['${not valid}', '${1X}', '${A:default}'],
    });
  });
});

describe('tool filters', () => {
  it('match exact names and * runs only', () => {
    expect(matchesAny('create_issue', ['create_issue'])).toBe(true);
    expect(matchesAny('create_issue', ['create_*'])).toBe(true);
    expect(matchesAny('create_issue', ['*_issue', 'x'])).toBe(true);
    expect(matchesAny('create.issue', ['create?issue'])).toBe(false);
    expect(matchesAny('create_issue', ['create'])).toBe(false);
  });
});

describe('stdout noise scanner', () => {
  function scan(chunks: string[]): string[] {
    const noise: string[] = [];
    const feed = stdoutNoiseScanner((line) => noise.push(line));
    for (const chunk of chunks) feed(Buffer.from(chunk));
    return noise;
  }

  it('quotes lines that cannot be JSON-RPC and ignores messages, blank lines and CRLF', () => {
    expect(scan(['Server ready on stdio\r\n{"jsonrpc":"2.0"}\n\n  {"a":1}\n', 'debug: x\n'])).toEqual([
      'Server ready on stdio',
      'debug: x',
    ]);
  });

  it('works across chunk boundaries, and caps what it quotes', () => {
    expect(scan(['{"jsonrpc":', '"2.0"}\nWar', 'ning: slow\n{"x"', ':1}\n'])).toEqual(['Warning: slow']);
    const [long] = scan([`${'y'.repeat(1000)}\n`]);
    expect(long).toHaveLength(300);
  });
});
