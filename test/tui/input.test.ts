import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type InputHistory,
  MAX_HISTORY_ENTRIES,
  MAX_HISTORY_ENTRY_CHARS,
} from '../../src/store/input-history.js';
import { TackStore } from '../../src/store/store.js';
import * as ed from '../../src/tui/editor.js';
import { printable } from '../../src/tui/format.js';
import { renderMarkdown, renderStreamingMarkdown, splitBlocks } from '../../src/tui/markdown.js';
import { attachMentions, completeMention, MAX_MENTION_CHARS, MAX_MENTIONS } from '../../src/tui/mentions.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

describe('the input editor', () => {
  it('edits several lines: insert, move up and down keeping the column, backspace over an emoji', () => {
    let s = ed.insert(ed.EMPTY_EDITOR, 'first line\nsecond');
    expect(ed.position(s)).toMatchObject({ line: 1, column: 6 });
    s = ed.up(s)!;
    expect(ed.position(s)).toMatchObject({ line: 0, column: 6 });
    expect(ed.up(s)).toBeUndefined();
    s = ed.insert(s, '!');
    expect(s.text).toBe('first !line\nsecond');
    s = ed.end(ed.down(s)!);
    s = ed.insert(s, ' 🎉');
    s = ed.backspace(s);
    expect(s.text).toBe('first !line\nsecond ');
    expect(ed.killWordBefore(ed.insert(s, 'word')).text).toBe('first !line\nsecond ');
    expect(ed.killLineBefore(s)).toEqual({ text: 'first !line\n', cursor: 12 });
    // Pasted Windows line ends become plain new lines.
    expect(ed.insert(ed.EMPTY_EDITOR, 'a\r\nb\rc').text).toBe('a\nb\nc');
  });

  it('holds at most MAX_INPUT_CHARS, however much is pasted', () => {
    const s = ed.insert(ed.EMPTY_EDITOR, 'x'.repeat(ed.MAX_INPUT_CHARS + 10));
    expect(s.text.length).toBe(ed.MAX_INPUT_CHARS);
    expect(ed.insert(s, 'more')).toBe(s);
  });
});

describe('input history in the store', () => {
  it('keeps each project’s messages apart, once per repeat, newest last, bounded', async () => {
    const store = TackStore.open(':memory:');
    scope.defer(() => store.close());
    const history: InputHistory = store.inputHistory;
    await history.add('/a', 'one');
    await history.add('/a', 'one');
    await history.add('/b', 'elsewhere');
    await history.add('/a', 'two');
    await history.add('/a', '   ');
    expect(await history.list('/a')).toEqual(['one', 'two']);
    expect(await history.list('/b')).toEqual(['elsewhere']);
    await history.add('/a', 'y'.repeat(MAX_HISTORY_ENTRY_CHARS + 5));
    expect((await history.list('/a')).at(-1)!.length).toBe(MAX_HISTORY_ENTRY_CHARS);
    for (let i = 0; i < MAX_HISTORY_ENTRIES + 20; i++) await history.add('/c', `m${i}`);
    const kept = await history.list('/c');
    expect(kept.length).toBe(MAX_HISTORY_ENTRIES);
    expect(kept.at(-1)).toBe(`m${MAX_HISTORY_ENTRIES + 19}`);
    expect(kept[0]).toBe('m20');
  });
});

describe('@file mentions', () => {
  it('completes names inside the folder only, and attaches the files a message names, bounded', () => {
    const p = scope.project('tack-mention-');
    mkdirSync(join(p.dir, 'src'));
    writeFileSync(join(p.dir, 'src', 'main.ts'), 'export const x = 1;\n');
    writeFileSync(join(p.dir, 'big.txt'), 'z'.repeat(MAX_MENTION_CHARS + 100));
    expect(completeMention('@sr', p.dir)).toEqual(['@src/']);
    expect(completeMention('@src/m', p.dir)).toEqual(['@src/main.ts']);
    expect(completeMention('@../', p.dir)).toEqual([]);

    const { text, notes } = attachMentions(
      'look at @src/main.ts and @big.txt, not @../etc/passwd or @someone',
      p.dir,
    );
    expect(text).toContain('<file path="src/main.ts">\nexport const x = 1;\n\n</file>');
    expect(text).toContain(`<file path="big.txt" cut_at="${MAX_MENTION_CHARS}">`);
    expect(text).not.toContain('z'.repeat(MAX_MENTION_CHARS + 1));
    expect(notes).toEqual([
      'attached src/main.ts',
      `attached big.txt (first ${MAX_MENTION_CHARS} characters)`,
      `@../etc/passwd not attached: only files inside ${p.dir}`,
    ]);
    const many = Array.from({ length: MAX_MENTIONS + 1 }, (_, i) => `@f${i}`);
    for (const name of many) writeFileSync(join(p.dir, name.slice(1)), name);
    expect(attachMentions(many.join(' '), p.dir).notes.at(-1)).toBe(
      `@f${MAX_MENTIONS} not attached: at most ${MAX_MENTIONS} files per message`,
    );
  });
});

describe('text drawn from outside', () => {
  it('loses the control characters that would move the cursor, clear the screen or retitle the terminal', () => {
    const hostile = 'ok\u001b[2J\u001b]0;pwned\u0007\tdone\u009b31m\r\nnext';
    expect(printable(hostile)).toBe('ok[2J]0;pwned  done31m\nnext');
  });
});

describe('streamed Markdown', () => {
  it('is cut into blocks at blank lines outside code fences, and renders as the whole text would', () => {
    expect(splitBlocks('a\n\nb\n\n```\nx\n\ny\n```\n\nc')).toEqual(['a\n', 'b\n', '```\nx\n\ny\n```\n', 'c']);
    const doc = '# T\n\npara one\n\n- x\n- y\n\n```js\nconst a = 1;\n```\n\n| h |\n|---|\n| v |\n\nend';
    for (let cut = 1; cut <= doc.length; cut += 7)
      expect(renderStreamingMarkdown(doc.slice(0, cut), 60).replace(/\s+/g, ' ')).toBe(
        renderMarkdown(doc.slice(0, cut), 60).replace(/\s+/g, ' '),
      );
  });
});
