import type { Key } from 'ink';
import * as ed from './editor.js';

/** What the input box's keys act on. */
export interface PromptKeyContext {
  editor: ed.EditorState;
  /** A turn runs: typing ahead is allowed, sending waits for it to end. */
  running: boolean;
  setEditor(next: ed.EditorState): void;
  submit(text: string): void;
  complete(): void;
  clearCompletions(): void;
  /** An earlier (-1) or later (+1) line of the input history. */
  recall(direction: -1 | 1): ed.EditorState;
}

/** A key in the input box: Enter sends, Alt-Enter and Ctrl-J break the line, Tab completes, the rest edits. */
export function promptKey(input: string, key: Key, ctx: PromptKeyContext): void {
  const { editor, running, setEditor } = ctx;
  // Typing ahead is allowed; sending waits for the turn to end.
  if (running && key.return) return;
  if (key.return && !key.meta) {
    if (editor.text.endsWith('\\') && editor.cursor === editor.text.length) {
      setEditor(ed.insert(ed.backspace(editor), '\n'));
      return;
    }
    if (!running) ctx.submit(editor.text);
    return;
  }
  if ((key.return && key.meta) || input === '\n') {
    setEditor(ed.insert(editor, '\n'));
    return;
  }
  if (key.tab) {
    ctx.complete();
    return;
  }
  ctx.clearCompletions();
  const edited = editKey(input, key, ctx);
  if (edited) setEditor(edited);
  else if (!key.ctrl && !key.meta && input !== '') {
    // Text and Enter in one read (typed ahead while the screen was busy, or sent by a script): the text, then send.
    if (input.length > 1 && input.endsWith('\r') && !input.slice(0, -1).includes('\r')) {
      const text = ed.insert(editor, input.slice(0, -1)).text;
      if (running) setEditor(ed.fromText(text));
      else ctx.submit(text);
    } else setEditor(ed.insert(editor, input));
  }
}

/** The editing keys: the editor after `key`, or undefined for a key that is not one of them. */
function editKey(input: string, key: Key, ctx: PromptKeyContext): ed.EditorState | undefined {
  const { editor } = ctx;
  if (key.backspace || key.delete) return ed.backspace(editor);
  if (key.leftArrow) return ed.left(editor);
  if (key.rightArrow) return ed.right(editor);
  if (key.upArrow) return ed.up(editor) ?? ctx.recall(-1);
  if (key.downArrow) return ed.down(editor) ?? ctx.recall(1);
  if (key.home || (key.ctrl && input === 'a')) return ed.home(editor);
  if (key.end || (key.ctrl && input === 'e')) return ed.end(editor);
  if (key.ctrl && input === 'u') return ed.killLineBefore(editor);
  if (key.ctrl && input === 'w') return ed.killWordBefore(editor);
  return undefined;
}
