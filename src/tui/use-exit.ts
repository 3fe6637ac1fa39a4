import { useApp } from 'ink';
import { useRef } from 'react';
import type { DialogQueue } from './dialogs.js';

/** Leaving the chat, once: the turn in flight is interrupted and every open question answered no. */
export interface ChatExit {
  exit(): void;
  /** The user has left (work that ends later must not bring the chat back). */
  exiting(): boolean;
}

export function useExit(options: { interrupt(): void; dialogs: DialogQueue; onExit(): void }): ChatExit {
  const app = useApp();
  const exiting = useRef(false);
  const exit = () => {
    if (exiting.current) return;
    exiting.current = true;
    options.interrupt();
    options.dialogs.cancelAll();
    app.exit();
    options.onExit();
  };
  return { exit, exiting: () => exiting.current };
}
