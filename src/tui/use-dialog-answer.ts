import type { Key } from 'ink';
import type { DialogQueue } from './dialogs.js';
import * as ed from './editor.js';
import { useRefState } from './use-ref-state.js';

/**
 * The keys of the dialog on top (an approval, a held definition, a server's question or confirmation): a key
 * that answers it settles it and the next one shows. A question's answer is typed in its own editor.
 */
export function useDialogAnswer(dialogs: DialogQueue): {
  /** The answer being typed to a question. */
  answer: ed.EditorState;
  /** A key for the dialog on top, if there is one. */
  key(input: string, key: Key): void;
} {
  const [answer, answerRef, setAnswer] = useRefState<ed.EditorState>(ed.EMPTY_EDITOR);

  const key = (input: string, key: Key) => {
    const dialog = dialogs.current;
    const answer = answerRef.current;
    if (!dialog) return;
    const char = input.toLowerCase();
    switch (dialog.kind) {
      case 'approval': {
        const always = dialog.request.alwaysRule !== undefined;
        if (char === 'y') dialog.answer({ decision: 'allow' });
        else if (char === 's') dialog.answer({ decision: 'allow', remember: 'session' });
        else if (char === 'a' && always) dialog.answer({ decision: 'allow', remember: 'always' });
        else if (char === 'n' || key.escape) dialog.answer({ decision: 'deny' });
        else return;
        break;
      }
      case 'definition':
      case 'confirm':
        if (char === 'y') dialog.answer(true);
        else if (char === 'n' || key.escape) dialog.answer(false);
        else return;
        break;
      case 'question':
        if (key.escape) dialog.answer(undefined);
        else if (key.return) {
          dialog.answer(answer.text);
          setAnswer(ed.EMPTY_EDITOR);
        } else {
          if (key.backspace || key.delete) setAnswer(ed.backspace(answer));
          else if (!key.ctrl && !key.meta && input !== '') setAnswer(ed.insert(answer, input));
          return;
        }
        break;
    }
    dialogs.settle();
  };

  return { answer, key };
}
