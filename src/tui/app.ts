import { Box, Text } from 'ink';
import { createElement as h, type ReactNode, useState } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import type { InputHistory } from '../store/input-history.js';
import type { SecretMasker } from '../util/secrets.js';
import { type CommandContext, runCommand } from './chat-commands.js';
import { ChatPrompt } from './chat-prompt.js';
import { ChatTranscript } from './chat-transcript.js';
import type { DialogQueue } from './dialogs.js';
import * as ed from './editor.js';
import { promptKey } from './prompt-keys.js';
import { type SessionSwitch, switchSession } from './session-switch.js';
import type { ServerProgress } from './startup.js';
import { RunningLine, StatusLine } from './status-line.js';
import type { Theme } from './theme.js';
import type { TranscriptView } from './transcript-view.js';
import { useChatKeys } from './use-chat-keys.js';
import { useCompletion } from './use-completion.js';
import { useDialogAnswer } from './use-dialog-answer.js';
import { useExit } from './use-exit.js';
import { useInputHistory } from './use-input-history.js';
import { useRedraw, useTerminalSize } from './use-redraw.js';
import { useRefState } from './use-ref-state.js';
import { useScrollback } from './use-scrollback.js';
import { useChatSession } from './use-session.js';
import { useSessionPicker } from './use-session-picker.js';
import { useStatusFigures } from './use-status-figures.js';
import { useTurn } from './use-turn.js';

export interface ChatAppProps {
  /**
   * The session, or its start in flight: the chat is drawn and takes input at once, the servers' progress on the
   * status line; a message sent meanwhile waits for the session. A start that fails ends the chat (onStartFailed).
   */
  agent: RunningAgent | Promise<RunningAgent>;
  /** The servers coming up while the session starts (the status line's `connecting 2/3: ...`). */
  progress?: ServerProgress | undefined;
  /** The session could not start: the chat has left, and the caller reports why. */
  onStartFailed?(error: unknown): void;
  /** Without it, /resume and /model can only say that they are not available. */
  switcher?: SessionSwitch | undefined;
  view: TranscriptView;
  dialogs: DialogQueue;
  /** The model's context window, for the status line's percentage. */
  window: number;
  cwd: string;
  /** Input history; by default the store's, of the session running at the time. */
  history?: InputHistory | undefined;
  masker?: SecretMasker | undefined;
  theme: Theme;
  /** Called once, when the user leaves (/exit, Ctrl-D, Ctrl-C twice). */
  onExit(): void;
}

/**
 * `tack chat` full screen: the transcript (earlier turns written once to the terminal's scrollback, the last turn
 * live), a dialog when the session asks a person something, the input box and the status line. It drives the
 * session only through its public API (run, compact, tools) and draws only from its events (TranscriptView).
 */
export function ChatApp(props: ChatAppProps): ReactNode {
  const { view, dialogs, cwd, masker, theme, switcher, progress } = props;
  const { width, rows } = useTerminalSize();
  const [editor, editorRef, setEditor] = useRefState<ed.EditorState>(ed.EMPTY_EDITOR);
  const [expanded, setExpanded] = useState(false);
  const scrollback = useScrollback(view);
  const history = useInputHistory(cwd, () => props.history ?? session.current()?.store?.inputHistory);
  const turn = useTurn({ view, cwd, session: (signal) => session.wait(signal) });
  // Subscribed before the session's own notices (a server whose listing failed) are told.
  const redraw = useRedraw(view, dialogs, progress, turn.running);
  const leave = useExit({ interrupt: turn.interrupt, dialogs, onExit: props.onExit });
  const session = useChatSession({
    agent: props.agent,
    model: switcher?.model,
    progress,
    view,
    onStarted: (started) => {
      redraw();
      history.load(props.history ?? started.store?.inputHistory);
    },
    onStartFailed: (error) => {
      props.onStartFailed?.(error);
      leave.exit();
    },
  });
  const completion = useCompletion({ editor: editorRef, setEditor, agent: session.current, cwd });
  const dialogAnswer = useDialogAnswer(dialogs);
  const switchTo = (resume: string, modelSpec?: string) =>
    switchSession(
      { switcher, session, view, setRunning: turn.setRunning, commit: scrollback.commit, exit: leave },
      resume,
      modelSpec,
    );
  const picker = useSessionPicker({ session, view, cwd, onPick: (id) => void switchTo(id) });

  /** A message: the previous turn goes to the scrollback, this one is drawn live. */
  const send = (text: string) => {
    scrollback.commit();
    setExpanded(false);
    return turn.run(text);
  };

  const commands: CommandContext = {
    view,
    cwd,
    progress,
    session,
    exit: leave.exit,
    clear: scrollback.clear,
    switchSession: switchTo,
    openPicker: picker.open,
    setRunning: turn.setRunning,
    send,
  };

  const submit = (text: string) => {
    const trimmed = text.trim();
    if (trimmed === '') return;
    history.remember(trimmed);
    setEditor(ed.EMPTY_EDITOR);
    completion.clear();
    if (!trimmed.startsWith('/') || trimmed.includes('\n')) {
      void send(trimmed);
      return;
    }
    void runCommand(trimmed, commands).then(() => {
      // A command's output is complete: it goes to the scrollback now, with what came before it, so the live
      // frame stays the input and what is in flight (a /help taller than the screen would make every frame a
      // full repaint).
      if (view.items.some((item) => item.kind === 'output')) scrollback.commit();
    });
  };

  useChatKeys({
    view,
    dialogs,
    turn,
    exit: leave.exit,
    promptEmpty: () => editorRef.current.text === '',
    clearPrompt: () => setEditor(ed.EMPTY_EDITOR),
    clearCompletions: completion.clear,
    toggleExpanded: () => setExpanded((e) => !e),
    dialogKey: dialogAnswer.key,
    pickerKey: picker.key,
    prompt: (input, key) =>
      promptKey(input, key, {
        editor: editorRef.current,
        running: turn.isRunning(),
        setEditor,
        submit,
        complete: completion.complete,
        clearCompletions: completion.clear,
        recall: (direction) => history.recall(direction, editorRef.current.text),
      }),
  });

  const running = turn.running;
  const dialog = dialogs.current;
  const extra = useStatusFigures(session.agent, view, running, progress);
  return h(
    Box,
    { flexDirection: 'column', width },
    h(ChatTranscript, {
      committed: scrollback.committed,
      items: view.items,
      width,
      rows,
      expanded,
      masker,
      theme,
    }),
    running && !dialog
      ? h(RunningLine, { progress: view.turnProgress(), waiting: !session.agent, theme })
      : null,
    h(Box, { marginTop: 1 }),
    h(ChatPrompt, {
      dialog,
      answer: dialogAnswer.answer,
      picker: picker.picker,
      editor,
      completions: completion.completions,
      running,
      rows,
      masker,
      theme,
    }),
    h(StatusLine, { figures: view.status, window: props.window, extra, running, theme }),
    h(Text, null, ''),
  );
}
