import type { GetPromptResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { MAX_ATTACHMENTS } from '../../src/mcp/attachments.js';
import { argumentAt, promptTurn, splitCommandWords } from '../../src/mcp/prompt-command.js';

/*
 * Prompt commands against input built to flood or stall: a server's prompt result of thousands of media blocks and
 * embedded resources (each one a note on the person's screen), and a long pasted word the argument splitter (run
 * at every keystroke for completion) used to scan again at each `=`.
 */

describe('prompt commands against floods', () => {
  it('bounds the notes of a prompt result of thousands of images and resources, and counts what it left', () => {
    const messages: GetPromptResult['messages'] = [];
    for (let i = 0; i < 10_000; i++)
      messages.push(
        i % 2 === 0
          ? { role: 'user', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } }
          : { role: 'user', content: { type: 'resource', resource: { uri: `x://r/${i}`, text: 'hi' } } },
      );
    const turn = promptTurn({ messages });
    expect(turn.notes.length).toBeLessThanOrEqual(22);
    expect(turn.notes).toContain("the prompt's image (image/png) is noted, not inlined");
    expect(turn.notes).toContain('attached x://r/1');
    expect(turn.notes.at(-2)).toMatch(/^and 99\d\d more notes like these$/);
    expect(turn.notes.at(-1)).toBe("the prompt's text was cut at 100000 characters");
    expect(turn.text.match(/<resource /g)).toHaveLength(MAX_ATTACHMENTS);
  });

  it('splits a long word with many "=" in linear time (it ran quadratic: ~8 s for this line)', () => {
    const line = `${'a'.repeat(60_000)}!${'='.repeat(60_000)}`;
    const started = performance.now();
    const words = splitCommandWords(line);
    argumentAt([], `/x ${line}`);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(words).toEqual([{ value: line, start: 0 }]);
    // Names still work as before.
    expect(splitCommandWords('city=Paris a=b=c =x 1=2')).toEqual([
      { name: 'city', value: 'Paris', start: 0 },
      { name: 'a', value: 'b=c', start: 11 },
      { value: '=x', start: 17 },
      { value: '1=2', start: 20 },
    ]);
  });
});
