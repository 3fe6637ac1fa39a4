import { createElement as h, type ReactNode } from 'react';
import type { SecretMasker } from '../util/secrets.js';
import { DialogView } from './dialog-view.js';
import type { Dialog } from './dialogs.js';
import type { EditorState } from './editor.js';
import { InputBox } from './input-box.js';
import { SessionPicker } from './session-picker.js';
import type { Theme } from './theme.js';
import type { PickerState } from './use-session-picker.js';

/** Under the transcript: the dialog on top if the session asks something, else the /resume picker, else the input. */
export function ChatPrompt({
  dialog,
  answer,
  picker,
  editor,
  completions,
  running,
  rows,
  masker,
  theme,
}: {
  dialog: Dialog | undefined;
  /** The answer being typed to a question. */
  answer: EditorState;
  picker: PickerState | undefined;
  editor: EditorState;
  completions: readonly string[];
  running: boolean;
  /** The terminal's rows. */
  rows: number;
  masker: SecretMasker | undefined;
  theme: Theme;
}): ReactNode {
  if (dialog) return h(DialogView, { dialog, masker, answerText: answer, theme });
  if (picker)
    return h(SessionPicker, { rows: picker.rows, index: picker.index, theme, lines: Math.max(3, rows - 10) });
  return h(InputBox, {
    editor,
    active: true,
    hint: running ? 'type ahead; Enter sends once the turn ends' : 'message, /help, @file',
    completions,
    theme,
  });
}
