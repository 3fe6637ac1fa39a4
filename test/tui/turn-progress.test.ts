import { describe, expect, it } from 'vitest';
import { estimateTextTokens } from '../../src/tokens/count.js';
import { TranscriptView } from '../../src/tui/transcript-view.js';

describe('the running line of a turn', () => {
  it('counts the answer streaming now with the one estimate, and forgets it once its step is over', () => {
    const view = new TranscriptView('anthropic:claude-sonnet-4-5');
    expect(view.turnProgress(0)).toBeUndefined();
    view.beginTurn(0);
    const deltas = ['The forecast for Lisbon: ', 'sunny, 24 °C; ', '{"city": "Lisbon"} tomorrow.'];
    for (const text of deltas) view.apply({ type: 'text-delta', text });
    const expected = deltas.reduce((sum, text) => sum + estimateTextTokens(text), 0);
    // Not characters/4: a different figure on this text, so the test tells the two apart.
    expect(expected).not.toBe(Math.ceil(deltas.join('').length / 4));
    expect(view.turnProgress(12_500)).toEqual({ seconds: 12, tokens: expected });
    view.endTurn();
    expect(view.turnProgress(13_000)).toBeUndefined();
  });
});
