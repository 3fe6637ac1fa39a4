import { useState } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import { completeInput } from './chat-input.js';
import * as ed from './editor.js';
import { commonPrefix } from './mentions.js';

/** Tab: the word at the cursor completed, and the options listed under the input box when there are several. */
export function useCompletion(options: {
  editor: { readonly current: ed.EditorState };
  setEditor(next: ed.EditorState): void;
  /** The session now; before it is up, only what needs no server completes. */
  agent(): RunningAgent | undefined;
  cwd: string;
}): { completions: string[]; complete(): void; clear(): void } {
  const { editor: editorRef, setEditor, cwd } = options;
  const [completions, setCompletions] = useState<string[]>([]);

  /** Puts `options` in at the cursor of `editor` (one: whole, several: their common prefix, and the list). */
  const fill = (editor: ed.EditorState, options: string[]): ed.EditorState => {
    if (options.length === 0) return editor;
    const prefix = options.length === 1 ? options[0]! : commonPrefix(options);
    const filled = options.length === 1 && !/[/=:]$/.test(prefix) ? `${prefix} ` : prefix;
    // Several options that share less than what is typed (a quoted value among names) are listed, not filled in.
    const next =
      options.length > 1 && !filled.startsWith(ed.wordAtCursor(editor).word)
        ? editor
        : ed.replaceWord(editor, filled);
    setEditor(next);
    setCompletions(options.length > 1 ? options : []);
    return next;
  };

  const complete = () => {
    const editor = editorRef.current;
    const { now, later } = completeInput(options.agent(), editor, cwd);
    const shown = fill(editor, now);
    // A server's completions land only if nothing was typed meanwhile.
    void later?.then((more) => {
      if (more.length > 0 && editorRef.current === shown) fill(editor, [...now, ...more]);
    });
  };

  return { completions, complete, clear: () => setCompletions([]) };
}
