import { describe, expect, it } from 'vitest';
import { missingLines, normalized } from './walk.js';

describe('the docs walk compares what a page shows with what ran', () => {
  it('ignores widths and figures, not words or order', () => {
    expect(normalized('notes    stdio   310 ms')).toBe(normalized('notes stdio 1696 ms'));
    expect(missingLines(['a 1', 'b 2'], 'a 10\nx\nb 20\n')).toEqual([]);
    expect(missingLines(['b 2', 'a 1'], 'a 10\nb 20\n')).toEqual(['a 1']);
    expect(missingLines(['notes connected modern (cached)'], 'notes connected modern\n')).toEqual([
      'notes connected modern (cached)',
    ]);
  });

  it('takes ... as lines left out, or as any text inside a line', () => {
    expect(missingLines(['first', '...', 'last'], 'first\nmiddle\nlast')).toEqual([]);
    expect(missingLines(['job sqlite:... ran (53 tokens)'], 'job sqlite:0dd-7b ran (53 tokens)')).toEqual([]);
    expect(missingLines(['token=...'], 'no token here')).toEqual(['token=...']);
    // The rest of the line is still literal: a regex character in a page is not a pattern.
    expect(missingLines(['a (b) [c]'], 'a b c')).toEqual(['a (b) [c]']);
  });
});
