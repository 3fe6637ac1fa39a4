import { Box, Text } from 'ink';
import { createElement as h, type ReactNode } from 'react';
import type { EditorState } from './editor.js';
import { printable } from './format.js';
import type { Theme } from './theme.js';

/** The input box: the text with a block cursor; a hint when empty. */
export function InputBox({
  editor,
  active,
  hint,
  completions,
  theme: t,
}: {
  editor: EditorState;
  active: boolean;
  hint: string;
  completions: readonly string[];
  theme: Theme;
}): ReactNode {
  const before = editor.text.slice(0, editor.cursor);
  const at = editor.text.slice(editor.cursor, editor.cursor + 1);
  const after = editor.text.slice(editor.cursor + 1);
  const cursorChar = at === '' || at === '\n' ? ' ' : at;
  return h(
    Box,
    { flexDirection: 'column' },
    h(
      Box,
      { borderStyle: 'round', borderColor: t.color(active ? 'cyan' : 'gray'), paddingX: 1 },
      h(Text, { color: t.color('cyan') }, '› '),
      editor.text === '' && !active
        ? h(Text, { color: t.color('gray') }, hint)
        : h(
            Text,
            { wrap: 'wrap' },
            before,
            active ? h(Text, { inverse: true }, cursorChar) : cursorChar,
            at === '\n' ? '\n' : '',
            after,
            editor.text === '' ? h(Text, { color: t.color('gray') }, ` ${hint}`) : '',
          ),
    ),
    completions.length > 0
      ? h(
          Text,
          { color: t.color('gray'), wrap: 'truncate-end' },
          printable(completions.slice(0, 12).join('  ')),
        )
      : null,
  );
}
