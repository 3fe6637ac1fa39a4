import type { Key } from 'ink';
import { earlierSessions, type SessionRow } from '../store/sessions.js';
import { errorText } from './format.js';
import type { TranscriptView } from './transcript-view.js';
import { useRefState } from './use-ref-state.js';
import type { ChatSession } from './use-session.js';

/** The /resume picker lists at most this many of the folder's newest sessions. */
export const PICKER_SESSIONS = 50;

/** The /resume picker: the folder's earlier sessions, newest first, and the one under the cursor. */
export interface PickerState {
  rows: SessionRow[];
  index: number;
}

export function useSessionPicker(options: {
  session: ChatSession;
  view: TranscriptView;
  cwd: string;
  /** The session chosen with Enter. */
  onPick(id: string): void;
}): {
  picker: PickerState | undefined;
  /** Lists the folder's earlier sessions, or says why there are none to pick. */
  open(): Promise<void>;
  /** A key for the open picker; false when it is closed. */
  key(key: Key): boolean;
} {
  const { session, view, cwd } = options;
  const [picker, pickerRef, setPicker] = useRefState<PickerState | undefined>(undefined);

  const open = async () => {
    const current = await session.wait();
    if (!current) return;
    const sessions = current.store?.sessions;
    if (!sessions) {
      view.output('/resume', 'no session index: the tack store is not open (use tack chat --resume <id>)');
      return;
    }
    let rows: SessionRow[];
    try {
      rows = await earlierSessions(sessions, { cwd, current: current.session.id, limit: PICKER_SESSIONS });
    } catch (error) {
      view.apply({ type: 'error', message: `/resume: cannot read the session index: ${errorText(error)}` });
      return;
    }
    if (rows.length === 0) {
      view.output('/resume', 'no earlier sessions in this folder');
      return;
    }
    setPicker({ rows, index: 0 });
  };

  const key = (key: Key) => {
    const open = pickerRef.current;
    if (!open) return false;
    if (key.escape) setPicker(undefined);
    else if (key.upArrow) setPicker({ ...open, index: Math.max(0, open.index - 1) });
    else if (key.downArrow) setPicker({ ...open, index: Math.min(open.rows.length - 1, open.index + 1) });
    else if (key.return) {
      setPicker(undefined);
      options.onPick(open.rows[open.index]!.id);
    }
    return true;
  };

  return { picker, open, key };
}
