import { useStdout } from 'ink';
import { useState } from 'react';
import type { TranscriptView, ViewItem } from './transcript-view.js';

/** Earlier turns: written once (Static) and dropped from the live view, so memory stays bounded. */
export interface Committed {
  batch: number;
  items: ViewItem[];
}

/** What goes to the terminal's scrollback, and /clear. */
export function useScrollback(view: TranscriptView): {
  committed: Committed;
  /** Earlier items go to the scrollback (written once, in order); what comes next is drawn live. */
  commit(): void;
  /** Clears the screen and the scrollback; the session and its history stay. */
  clear(): void;
} {
  const { write } = useStdout();
  const [committed, setCommitted] = useState<Committed>({ batch: 0, items: [] });
  const commit = () => {
    const done = view.takeItems();
    if (done.length > 0) setCommitted((c) => ({ batch: c.batch + 1, items: done }));
  };
  const clear = () => {
    setCommitted((c) => ({ batch: c.batch + 1, items: [] }));
    view.clear();
    // Through Ink, which erases its frame first and draws it again after: written past it, the frame it
    // remembers would be off by the lines the clear moved.
    write('\u001b[2J\u001b[3J\u001b[H');
  };
  return { committed, commit, clear };
}
