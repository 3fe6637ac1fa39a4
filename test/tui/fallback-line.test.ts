import { describe, expect, it } from 'vitest';
import { ZERO_USAGE } from '../../src/agent/events.js';
import { TranscriptView } from '../../src/tui/transcript-view.js';

describe('a fallback in the full-screen chat', () => {
  it('is a line of its own; the status line names the fallback until the run ends', () => {
    const view = new TranscriptView('anthropic:claude-sonnet-4-5');
    view.apply({ type: 'text-delta', text: 'Let me' });
    view.apply({
      type: 'model-fallback',
      step: 2,
      from: 'anthropic:claude-sonnet-4-5',
      to: 'openai:gpt-5',
      reason: 'overloaded (529: Overloaded)',
    });
    expect(view.items.at(-1)).toMatchObject({
      kind: 'notice',
      tone: 'fallback',
      text: 'anthropic:claude-sonnet-4-5 failed (overloaded (529: Overloaded)); step 2 goes to openai:gpt-5',
    });
    // The answer streamed before the switch is closed: the fallback's answer starts anew.
    expect(view.items[0]).toMatchObject({ kind: 'answer', done: true });
    expect(view.status.model).toBe('openai:gpt-5');
    view.apply({ type: 'session-end', reason: 'completed', detail: '', total: ZERO_USAGE, steps: 2 });
    expect(view.status.model).toBe('anthropic:claude-sonnet-4-5');
  });
});
