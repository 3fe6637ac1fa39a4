import { describe, expect, it } from 'vitest';
import { wilson } from '../../bench/scan-corpus/run.js';

describe('bench/scan-corpus wilson', () => {
  it('gives the published Wilson 95 % bounds, not the normal approximation', () => {
    // Reference values (Newcombe 1998, table I): 0/10 → 0-0.2775; 5/5 → 0.5655-1; 81/263 → 0.2553-0.3662.
    expect(wilson(0, 10)).toEqual([0, 0.278]);
    expect(wilson(5, 5)).toEqual([0.566, 1]);
    expect(wilson(81, 263)).toEqual([0.255, 0.366]);
    expect(wilson(0, 0)).toBeNull();
  });
});
