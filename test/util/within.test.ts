import { describe, expect, it } from 'vitest';
import { within } from '../../src/util/within.js';

describe('within', () => {
  it('gives the value of work that settles in time, and throws its rejection', async () => {
    expect(await within(Promise.resolve(7), 1_000)).toEqual({ done: true, value: 7 });
    expect(await within(undefined, 1_000)).toEqual({ done: true, value: undefined });
    await expect(within(Promise.reject(new Error('no')), 1_000)).rejects.toThrow('no');
  });

  it('says the time ran out, and a later rejection surfaces nowhere', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const late = new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 30));
      expect(await within(late, 5)).toEqual({ done: false });
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
