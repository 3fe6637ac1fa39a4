import { type Key, useInput } from 'ink';
import { useRef } from 'react';
import type { DialogQueue } from './dialogs.js';
import type { TranscriptView } from './transcript-view.js';
import type { Turn } from './use-turn.js';

/** Two Ctrl-C within this long quit. */
const DOUBLE_PRESS_MS = 2000;

/** What the chat's keys act on; the input box's own keys go to `prompt`. */
export interface ChatKeyContext {
  view: TranscriptView;
  dialogs: DialogQueue;
  turn: Turn;
  exit(): void;
  /** The input box's text is empty (Ctrl-C clears it, Ctrl-D quits only then). */
  promptEmpty(): boolean;
  clearPrompt(): void;
  clearCompletions(): void;
  /** Ctrl-O: expand or fold the tool calls of the last turn. */
  toggleExpanded(): void;
  /** A key for the dialog on top. */
  dialogKey(input: string, key: Key): void;
  /** A key for the /resume picker; false when it is closed. */
  pickerKey(key: Key): boolean;
  prompt(input: string, key: Key): void;
}

/**
 * The chat's keys, in order: Ctrl-C, then the dialog on top or the /resume picker if one is open, then Esc,
 * Ctrl-D and Ctrl-O, then the input box.
 */
export function useChatKeys(ctx: ChatKeyContext): void {
  const lastCtrlC = useRef(0);
  useInput((input, key) => {
    const { view, dialogs, turn } = ctx;
    // Ctrl-C: interrupt a turn (denying what it waits on); idle, clear the input; twice quits.
    if (key.ctrl && input === 'c') {
      const now = Date.now();
      if (now - lastCtrlC.current < DOUBLE_PRESS_MS) {
        ctx.exit();
        return;
      }
      lastCtrlC.current = now;
      if (turn.interrupt()) {
        dialogs.cancelAll();
        view.notice('interrupted; Ctrl-C again to quit');
      } else if (!ctx.promptEmpty()) ctx.clearPrompt();
      else view.notice('Ctrl-C again to quit');
      return;
    }
    if (dialogs.current) {
      ctx.dialogKey(input, key);
      return;
    }
    if (ctx.pickerKey(key)) return;
    if (key.escape) {
      if (turn.interrupt()) view.notice('interrupted');
      ctx.clearCompletions();
      return;
    }
    if (key.ctrl && input === 'd') {
      if (ctx.promptEmpty()) ctx.exit();
      return;
    }
    if (key.ctrl && input === 'o') {
      ctx.toggleExpanded();
      return;
    }
    ctx.prompt(input, key);
  });
}
