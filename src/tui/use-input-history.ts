import { useRef } from 'react';
import type { InputHistory } from '../store/input-history.js';
import * as ed from './editor.js';

/**
 * The messages and commands sent, recalled with Up and Down: this chat's, after those the store kept for the
 * folder (which arrive asynchronously: it may be a PostgreSQL server; what was typed meanwhile stays after them).
 */
export function useInputHistory(
  cwd: string,
  /** The store's history, of the session running at the time; undefined keeps it in memory only. */
  store: () => InputHistory | undefined,
): {
  /** Loads what `kept` has for the folder, before what was sent meanwhile. */
  load(kept: InputHistory | undefined): void;
  /** Keeps a sent line (and ends a recall). */
  remember(text: string): void;
  /** -1 older, +1 newer; `draft`, the text being typed, comes back past the newest. */
  recall(direction: -1 | 1, draft: string): ed.EditorState;
} {
  const entries = useRef<string[]>([]);
  const recalled = useRef<{ entries: string[]; index: number; draft: string } | undefined>(undefined);

  const load = (kept: InputHistory | undefined) => {
    kept?.list(cwd).then(
      (earlier) => {
        entries.current = [...earlier, ...entries.current];
      },
      () => {
        // The history is a convenience: a store that cannot be read starts it empty.
      },
    );
  };

  const remember = (text: string) => {
    entries.current.push(text);
    store()
      ?.add(cwd, text)
      .catch(() => {
        // The history is a convenience: a store that cannot write must not stop the chat.
      });
    recalled.current = undefined;
  };

  const recall = (direction: -1 | 1, draft: string) => {
    const list = entries.current;
    const state = recalled.current ?? { entries: list, index: list.length, draft };
    const index = Math.max(0, Math.min(list.length, state.index + direction));
    recalled.current = { ...state, index };
    return ed.fromText(index === list.length ? state.draft : list[index]!);
  };

  return { load, remember, recall };
}
