import { useRef } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import { prepareTurn } from './chat-input.js';
import { errorText } from './format.js';
import type { TranscriptView } from './transcript-view.js';
import { useRefState } from './use-ref-state.js';

/** The turn in flight: whether the running line shows, sending a message, and interrupting it. */
export interface Turn {
  running: boolean;
  /** Running now, for the key handler (see useRefState). */
  isRunning(): boolean;
  /** Shows the running line while other work (a compaction, a session switch) goes on. */
  setRunning(next: boolean): void;
  /** Sends `text` as a turn, drawn live, once the session is up; resolves when the turn has ended. */
  run(text: string): Promise<void>;
  /** Aborts the turn in flight; false when none is. */
  interrupt(): boolean;
}

export function useTurn(options: {
  view: TranscriptView;
  cwd: string;
  /** The session, waited for while it starts; undefined if it never started or the wait was aborted. */
  session(signal: AbortSignal): Promise<RunningAgent | undefined>;
}): Turn {
  const { view, cwd, session } = options;
  const [running, runningRef, setRunning] = useRefState(false);
  const controller = useRef<AbortController | undefined>(undefined);

  const run = async (text: string) => {
    view.user(text);
    const abort = new AbortController();
    controller.current = abort;
    view.beginTurn();
    setRunning(true);
    try {
      // Once the session is up: a message sent before the servers are, waits for them.
      const current = await session(abort.signal);
      if (!current || abort.signal.aborted) return;
      await sendTurn(current, text, { view, cwd, signal: abort.signal });
    } catch (error) {
      view.apply({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    } finally {
      controller.current = undefined;
      view.endTurn();
      setRunning(false);
    }
  };

  const interrupt = () => {
    if (!controller.current) return false;
    controller.current.abort();
    return true;
  };

  return { running, isRunning: () => runningRef.current, setRunning, run, interrupt };
}

/** A prompt or skill command becomes its text; @file and @server:uri mentions are attached; then it runs. */
async function sendTurn(
  agent: RunningAgent,
  text: string,
  options: { view: TranscriptView; cwd: string; signal: AbortSignal },
): Promise<void> {
  const { view, cwd, signal } = options;
  let turn: Awaited<ReturnType<typeof prepareTurn>>;
  try {
    turn = await prepareTurn(agent, text, cwd, signal);
  } catch (error) {
    // Nothing was sent: the command's usage (its hint) says how to write it.
    view.apply({ type: 'error', message: errorText(error) });
    return;
  }
  for (const note of turn.notes) view.notice(note);
  if (turn.skill && !view.status.activeSkills.includes(turn.skill)) view.status.activeSkills.push(turn.skill);
  await agent.session.run(turn.message, { signal });
}
