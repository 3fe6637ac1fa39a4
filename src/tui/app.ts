import { Box, Static, Text, useApp, useInput, useStdout } from 'ink';
import { createElement as h, type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import type { ResolvedModel } from '../agent/model.js';
import type { InputHistory } from '../store/input-history.js';
import { earlierSessions, type SessionRow } from '../store/sessions.js';
import type { SecretMasker } from '../util/secrets.js';
import {
  completeInput,
  isUserCommand,
  prepareTurn,
  userCommandHelp,
  watchListingFailures,
} from './chat-input.js';
import { costText, helpText, serversText, skillsText, toolsText } from './commands.js';
import {
  DialogView,
  InputBox,
  ItemView,
  RunningLine,
  SessionPicker,
  StatusLine,
  type Theme,
} from './components.js';
import type { DialogQueue } from './dialogs.js';
import * as ed from './editor.js';
import { commonPrefix } from './mentions.js';
import { connectingText, type ServerProgress } from './startup.js';
import { statusText } from './status.js';
import type { TranscriptView, ViewItem } from './transcript-view.js';

/**
 * How the chat moves to another session (/resume) or model (/model): the running session is closed and the target
 * one started the way `tack chat --resume <id>` starts it (its transcript reopened, its history and usage carried
 * on), with the same event and dialog routing. A session's model is fixed when it starts, so a new model is the
 * current session resumed under it.
 */
export interface SessionSwitch {
  /** The model the first session runs on (a failed switch comes back to the session on it). */
  model: ResolvedModel;
  /** `provider:id` to a model, throwing a clear error for one tack cannot reach; called before anything closes. */
  resolveModel(spec: string): ResolvedModel;
  /** Starts session `resume` (an id or prefix) on `model`. */
  start(target: { resume: string; model: ResolvedModel }): Promise<RunningAgent>;
  /** Told each time the chat runs on another agent (whoever started the first one closes the last one). */
  onAgent?(agent: RunningAgent): void;
}

/** The /resume picker lists at most this many of the folder's newest sessions. */
export const PICKER_SESSIONS = 50;

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

/** Redraws at most this often while events stream in (a token per event would redraw per token). */
const FRAME_MS = 33;
/** Two Ctrl-C within this long quit. */
const DOUBLE_PRESS_MS = 2000;
/** The running line's clock ticks this often. */
const TICK_MS = 1000;

/** What the chat answers while the session starts; every other command waits for it. */
const STARTING_COMMANDS = new Set(['/exit', '/quit', '/help', '/status', '/servers', '/clear']);

function isPromise(value: RunningAgent | Promise<RunningAgent>): value is Promise<RunningAgent> {
  return typeof (value as Promise<RunningAgent>).then === 'function';
}

/**
 * `tack chat` full screen: the transcript (earlier turns written once to the terminal's scrollback, the last turn
 * live), a dialog when the session asks a person something, the input box and the status line. It drives the
 * session only through its public API (run, compact, tools) and draws only from its events (TranscriptView).
 */
export function ChatApp(props: ChatAppProps): ReactNode {
  const { view, dialogs, cwd, masker, theme, switcher, progress } = props;
  // The session can change (/resume, /model): everything that acts on it reads the ref. Undefined while it starts.
  const first = isPromise(props.agent) ? undefined : props.agent;
  const [agent, setAgentState] = useState<RunningAgent | undefined>(first);
  const agentRef = useRef<RunningAgent | undefined>(first);
  /** The first session, once started; what a message or command sent while it starts waits for. */
  const ready = useRef<Promise<RunningAgent>>(
    isPromise(props.agent) ? props.agent : Promise.resolve(props.agent),
  );
  const modelRef = useRef(switcher?.model);
  const history = () => props.history ?? agentRef.current?.store?.inputHistory;
  const app = useApp();
  const { stdout, write: writeOut } = useStdout();
  const [width, setWidth] = useState(stdout.columns || 80);
  const [rows, setRows] = useState(stdout.rows || 24);
  const [, setFrame] = useState(0);
  // The key handler reads these through refs: it may run before React has handed it the latest render's values.
  const [editor, setEditorState] = useState<ed.EditorState>(ed.EMPTY_EDITOR);
  const editorRef = useRef(editor);
  const setEditor = (next: ed.EditorState) => {
    editorRef.current = next;
    setEditorState(next);
  };
  const [answer, setAnswerState] = useState<ed.EditorState>(ed.EMPTY_EDITOR);
  const answerRef = useRef(answer);
  const setAnswer = (next: ed.EditorState) => {
    answerRef.current = next;
    setAnswerState(next);
  };
  const [completions, setCompletions] = useState<string[]>([]);
  const [expanded, setExpanded] = useState(false);
  const [running, setRunningState] = useState(false);
  const runningRef = useRef(false);
  const setRunning = (next: boolean) => {
    runningRef.current = next;
    setRunningState(next);
  };
  /** Earlier turns: written once (Static) and dropped from the live view, so memory stays bounded. */
  const [committed, setCommitted] = useState<{ batch: number; items: ViewItem[] }>({ batch: 0, items: [] });
  const controller = useRef<AbortController | undefined>(undefined);
  const lastCtrlC = useRef(0);
  const recalled = useRef<{ entries: string[]; index: number; draft: string } | undefined>(undefined);
  const entries = useRef<string[]>([]);
  const exiting = useRef(false);

  // The first session: drawn on (its earlier turns when resumed) once it has started. The kept input history
  // arrives from its store (asynchronous: it may be a PostgreSQL server); what was typed meanwhile stays after it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the session the chat was started with.
  useEffect(() => {
    let live = true;
    ready.current.then(
      (started) => {
        progress?.detach();
        view.started();
        if (!live) return;
        agentRef.current = started;
        setAgentState(started);
        if (started.resumed) {
          view.history(started.session.messages, started.session.usage);
          for (const note of started.resumed.notes) view.notice(`resume: ${note}`);
        }
        setFrame((n) => n + 1);
        (props.history ?? started.store?.inputHistory)?.list(cwd).then(
          (kept) => {
            if (live) entries.current = [...kept, ...entries.current];
          },
          () => {
            // The history is a convenience: a store that cannot be read starts it empty.
          },
        );
      },
      (error: unknown) => {
        if (!live) return;
        props.onStartFailed?.(error);
        exit();
      },
    );
    return () => {
      live = false;
    };
  }, []);
  /** The /resume picker: the folder's earlier sessions, newest first, and the one under the cursor. */
  const [picker, setPickerState] = useState<{ rows: SessionRow[]; index: number } | undefined>(undefined);
  const pickerRef = useRef(picker);
  const setPicker = (next: { rows: SessionRow[]; index: number } | undefined) => {
    pickerRef.current = next;
    setPickerState(next);
  };

  // Events arrive per token; the screen follows at most once a frame.
  useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    const redraw = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        setFrame((n) => n + 1);
      }, FRAME_MS);
    };
    const offView = view.subscribe(redraw);
    const offDialogs = dialogs.subscribe(() => setFrame((n) => n + 1));
    const offProgress = progress?.subscribe(redraw);
    return () => {
      offView();
      offDialogs();
      offProgress?.();
      if (timer) clearTimeout(timer);
    };
  }, [view, dialogs, progress]);

  // The running line's clock: a frame a second while a turn runs.
  useEffect(() => {
    if (!running) return;
    const tick = setInterval(() => setFrame((n) => n + 1), TICK_MS);
    return () => clearInterval(tick);
  }, [running]);

  // A server whose prompts or resources could not be listed serves on without them: said once, in a line.
  useEffect(
    () => (agent ? watchListingFailures(agent, (text) => view.notice(text)) : undefined),
    [agent, view],
  );

  useEffect(() => {
    const onResize = () => {
      setWidth(stdout.columns || 80);
      setRows(stdout.rows || 24);
    };
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);

  const exit = () => {
    if (exiting.current) return;
    exiting.current = true;
    controller.current?.abort();
    dialogs.cancelAll();
    app.exit();
    props.onExit();
  };

  /** Earlier items go to the scrollback (written once, in order); what comes next is drawn live. */
  const commit = () => {
    const done = view.takeItems();
    if (done.length > 0) setCommitted((c) => ({ batch: c.batch + 1, items: done }));
  };

  /**
   * The session, waiting for it while it starts (a message sent before the servers are up waits for them: the
   * model is then offered every tool that came up, not whatever was ready at the time). Undefined if it never
   * started or the wait was interrupted.
   */
  const session = async (signal?: AbortSignal): Promise<RunningAgent | undefined> => {
    if (agentRef.current) return agentRef.current;
    const aborted = new Promise<undefined>((resolve) => {
      if (signal?.aborted) resolve(undefined);
      signal?.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    try {
      await Promise.race([ready.current, aborted]);
    } catch {
      return undefined; // the start failed: the chat is leaving and the caller says why
    }
    return agentRef.current;
  };

  const run = async (text: string) => {
    // The previous turn goes to the scrollback; this one is drawn live.
    commit();
    setExpanded(false);
    view.user(text);
    const abort = new AbortController();
    controller.current = abort;
    view.beginTurn();
    setRunning(true);
    try {
      // Once the session is up: a message sent before the servers are, waits for them.
      const current = await session(abort.signal);
      if (!current || abort.signal.aborted) return;
      // A prompt or skill command becomes its text; @file and @server:uri mentions are attached.
      let turn: Awaited<ReturnType<typeof prepareTurn>>;
      try {
        turn = await prepareTurn(current, text, cwd, abort.signal);
      } catch (error) {
        // Nothing was sent: the command's usage (its hint) says how to write it.
        view.apply({ type: 'error', message: errorText(error) });
        return;
      }
      for (const note of turn.notes) view.notice(note);
      if (turn.skill && !view.status.activeSkills.includes(turn.skill))
        view.status.activeSkills.push(turn.skill);
      await current.session.run(turn.message, { signal: abort.signal });
    } catch (error) {
      view.apply({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    } finally {
      controller.current = undefined;
      view.endTurn();
      setRunning(false);
    }
  };

  /**
   * Continues session `resume` (possibly the current one) on `modelSpec` (default: the current model). An unknown
   * model changes nothing; a session that cannot be opened brings the chat back to the one it was on.
   */
  const switchSession = async (resume: string, modelSpec?: string) => {
    if (!switcher || !modelRef.current) {
      view.output(modelSpec ? '/model' : '/resume', 'not available here: this chat cannot start sessions');
      return;
    }
    const old = await session();
    if (!old) return;
    const oldModel = modelRef.current;
    let model = oldModel;
    try {
      if (modelSpec) model = switcher.resolveModel(modelSpec);
    } catch (error) {
      view.apply({ type: 'error', message: `/model ${modelSpec}: ${errorText(error)}` });
      return;
    }
    try {
      // An ambiguous prefix is told before anything closes (an unknown one is found out by opening it: the index
      // is a cache, the transcript files decide).
      await old.store?.sessions.findByPrefix(resume);
    } catch (error) {
      view.apply({ type: 'error', message: `/resume ${resume}: ${errorText(error)}` });
      return;
    }
    const sameSession = resume === old.session.id;
    setRunning(true);
    let next: RunningAgent | undefined;
    try {
      // The same transcript must not have two writers: the running session closes before it is reopened.
      await old.close();
      try {
        next = await switcher.start({ resume, model });
      } catch (error) {
        view.apply({ type: 'error', message: `cannot open session ${resume}: ${errorText(error)}` });
        next = await switcher.start({ resume: old.session.id, model: oldModel });
        model = oldModel;
        view.notice(`back in session ${old.session.id}`);
      }
    } catch (error) {
      view.apply({ type: 'error', message: `cannot reopen session ${old.session.id}: ${errorText(error)}` });
      setRunning(false);
      exit();
      return;
    }
    if (exiting.current) {
      // The user left while it opened: nobody would close it.
      await next.close();
      return;
    }
    agentRef.current = next;
    modelRef.current = model;
    setAgentState(next);
    switcher.onAgent?.(next);
    if (next.session.id !== old.session.id || !sameSession) {
      // The turns on screen belong to the other session: they go to the scrollback, this one's are shown.
      commit();
      view.notice(`resumed session ${next.session.id}`);
      view.history(next.session.messages, next.session.usage);
    } else if (modelSpec)
      view.notice(`model ${model.spec} from the next turn; session ${next.session.id} continues`);
    for (const note of next.resumed?.notes ?? []) view.notice(`resume: ${note}`);
    setRunning(false);
  };

  const openPicker = async () => {
    const current = await session();
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

  const command = async (line: string) => {
    const [name, ...args] = line.split(/\s+/);
    const arg = args.join(' ').trim();
    if (!agentRef.current && !STARTING_COMMANDS.has(name ?? '')) {
      // Everything else asks the session: it answers once the servers are up.
      view.notice(`${name} answers once the session has started (${connectingText(progress?.rows() ?? [])})`);
      if (!(await session())) return;
    }
    const agent = agentRef.current;
    switch (name) {
      case '/exit':
      case '/quit':
        exit();
        return;
      case '/help':
        view.output('/help', helpText(agent ? userCommandHelp(agent) : []));
        return;
      case '/status':
        view.output('/status', statusText({ view, agent, cwd, progress: progress?.rows() ?? [] }));
        return;
      case '/tools':
        if (agent) view.output('/tools', toolsText(agent));
        return;
      case '/skills':
        if (agent) view.output('/skills', skillsText(agent, view.status.activeSkills));
        return;
      case '/servers':
        view.output('/servers', agent ? serversText(agent) : connectingText(progress?.rows() ?? []));
        return;
      case '/cost':
        if (agent) view.output('/cost', costText(agent));
        return;
      case '/clear':
        setCommitted((c) => ({ batch: c.batch + 1, items: [] }));
        view.clear();
        // Through Ink, which erases its frame first and draws it again after: written past it, the frame it
        // remembers would be off by the lines the clear moved.
        writeOut('\u001b[2J\u001b[3J\u001b[H');
        return;
      case '/resume':
        if (arg !== '') await switchSession(arg);
        else await openPicker();
        return;
      case '/model':
        if (arg === '')
          view.output(
            '/model',
            `${modelRef.current?.spec ?? view.status.model} (switch with /model <provider:id>, e.g. /model openai:gpt-5)`,
          );
        else if (agent) await switchSession(agent.session.id, arg);
        return;
      case '/compact': {
        if (!agent) return;
        setRunning(true);
        try {
          const done = await agent.session.compact();
          if (!done) view.notice('nothing to compact');
        } catch (error) {
          view.apply({ type: 'error', message: `compaction failed: ${(error as Error).message}` });
        } finally {
          setRunning(false);
        }
        return;
      }
      default:
        // Before the session is up, a command that is not built in may be a server's prompt or a skill: the
        // turn waits for the session and says so if it is neither.
        if (name && (!agentRef.current || isUserCommand(agentRef.current, name))) await run(line);
        else view.output(name ?? line, `unknown command ${name}: type /help for the list`);
    }
  };

  const submit = (text: string) => {
    const trimmed = text.trim();
    if (trimmed === '') return;
    entries.current.push(trimmed);
    history()
      ?.add(cwd, trimmed)
      .catch(() => {
        // The history is a convenience: a store that cannot write must not stop the chat.
      });
    recalled.current = undefined;
    setEditor(ed.EMPTY_EDITOR);
    setCompletions([]);
    if (trimmed.startsWith('/') && !trimmed.includes('\n'))
      void command(trimmed).then(() => {
        // A command's output is complete: it goes to the scrollback now, with what came before it, so the live
        // frame stays the input and what is in flight (a /help taller than the screen would make every frame a
        // full repaint).
        if (view.items.some((item) => item.kind === 'output')) commit();
      });
    else void run(trimmed);
  };

  const dialog = dialogs.current;

  useInput((input, key) => {
    const editor = editorRef.current;
    const running = runningRef.current;
    const dialog = dialogs.current;
    // Ctrl-C: interrupt a turn (denying what it waits on); idle, clear the input; twice quits.
    if (key.ctrl && input === 'c') {
      const now = Date.now();
      if (now - lastCtrlC.current < DOUBLE_PRESS_MS) {
        exit();
        return;
      }
      lastCtrlC.current = now;
      if (controller.current) {
        controller.current.abort();
        dialogs.cancelAll();
        view.notice('interrupted; Ctrl-C again to quit');
      } else if (editor.text !== '') setEditor(ed.EMPTY_EDITOR);
      else view.notice('Ctrl-C again to quit');
      return;
    }
    if (dialog) {
      answerDialog(input, key);
      return;
    }
    const open = pickerRef.current;
    if (open) {
      if (key.escape) setPicker(undefined);
      else if (key.upArrow) setPicker({ ...open, index: Math.max(0, open.index - 1) });
      else if (key.downArrow) setPicker({ ...open, index: Math.min(open.rows.length - 1, open.index + 1) });
      else if (key.return) {
        setPicker(undefined);
        void switchSession(open.rows[open.index]!.id);
      }
      return;
    }
    if (key.escape) {
      if (controller.current) {
        controller.current.abort();
        view.notice('interrupted');
      }
      setCompletions([]);
      return;
    }
    if (key.ctrl && input === 'd') {
      if (editor.text === '') exit();
      return;
    }
    if (key.ctrl && input === 'o') {
      setExpanded((e) => !e);
      return;
    }
    if (running) {
      // Typing ahead is allowed; sending waits for the turn to end.
      if (key.return) return;
    }
    if (key.return && !key.meta) {
      if (editor.text.endsWith('\\') && editor.cursor === editor.text.length) {
        setEditor(ed.insert(ed.backspace(editor), '\n'));
        return;
      }
      if (!running) submit(editor.text);
      return;
    }
    if ((key.return && key.meta) || input === '\n') {
      setEditor(ed.insert(editor, '\n'));
      return;
    }
    if (key.tab) {
      complete();
      return;
    }
    setCompletions([]);
    if (key.backspace || key.delete) setEditor(ed.backspace(editor));
    else if (key.leftArrow) setEditor(ed.left(editor));
    else if (key.rightArrow) setEditor(ed.right(editor));
    else if (key.upArrow) setEditor(ed.up(editor) ?? recall(-1));
    else if (key.downArrow) setEditor(ed.down(editor) ?? recall(1));
    else if (key.home || (key.ctrl && input === 'a')) setEditor(ed.home(editor));
    else if (key.end || (key.ctrl && input === 'e')) setEditor(ed.end(editor));
    else if (key.ctrl && input === 'u') setEditor(ed.killLineBefore(editor));
    else if (key.ctrl && input === 'w') setEditor(ed.killWordBefore(editor));
    else if (!key.ctrl && !key.meta && input !== '') {
      // Text and Enter in one read (typed ahead while the screen was busy, or sent by a script): the text, then send.
      if (input.length > 1 && input.endsWith('\r') && !input.slice(0, -1).includes('\r')) {
        const text = ed.insert(editor, input.slice(0, -1)).text;
        if (running) setEditor(ed.fromText(text));
        else submit(text);
      } else setEditor(ed.insert(editor, input));
    }
  });

  /** History: -1 older, +1 newer; the draft being typed comes back past the newest. */
  function recall(direction: -1 | 1): ed.EditorState {
    const editor = editorRef.current;
    const list = entries.current;
    const state = recalled.current ?? { entries: list, index: list.length, draft: editor.text };
    const index = Math.max(0, Math.min(list.length, state.index + direction));
    recalled.current = { ...state, index };
    return ed.fromText(index === list.length ? state.draft : list[index]!);
  }

  function complete(): void {
    const editor = editorRef.current;
    const { now, later } = completeInput(agentRef.current, editor, cwd);
    const shown = fill(editor, now);
    // A server's completions land only if nothing was typed meanwhile.
    void later?.then((more) => {
      if (more.length > 0 && editorRef.current === shown) fill(editor, [...now, ...more]);
    });
  }

  /** Puts `options` in at the cursor of `editor` (one: whole, several: their common prefix, and the list). */
  function fill(editor: ed.EditorState, options: string[]): ed.EditorState {
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
  }

  function answerDialog(
    input: string,
    key: {
      escape: boolean;
      return: boolean;
      backspace: boolean;
      delete: boolean;
      ctrl: boolean;
      meta: boolean;
    },
  ): void {
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
  }

  // The status figures that ask the session and the host: once per change of the view, not per keystroke.
  // biome-ignore lint/correctness/useExhaustiveDependencies: view.version and running are what say they changed.
  const figures = useMemo(() => {
    if (!agent) return undefined;
    const host = agent.host;
    const servers = host?.servers() ?? [];
    const up = servers.filter((s) => s.status === 'connected').length;
    const down = servers.filter((s) => s.status === 'failed').length;
    const tools = agent.session.tools();
    const mcpTools = tools.filter((t) => t.server).length;
    return {
      servers: servers.length > 0 ? `servers ${up} up${down > 0 ? ` ${down} down` : ''}` : '',
      tools: agent.session.deferringTools
        ? `tools ${mcpTools}/${host?.catalog.tools.length ?? 0} loaded`
        : `${tools.length} tools`,
    };
  }, [agent, view.version, running]);
  // While the session starts: each server as it comes up (a few snapshots a frame, no session to ask yet).
  const extra = figures ?? { servers: connectingText(progress?.rows() ?? []), tools: '' };
  const progressNow = running ? view.turnProgress() : undefined;

  return h(
    Box,
    { flexDirection: 'column', width },
    // A new batch is a new Static: it writes its items once, then they live in the terminal's scrollback.
    h(Static<ViewItem>, {
      key: committed.batch,
      items: committed.items,
      // biome-ignore lint/correctness/noChildrenProp: Static's typed props take the render function as children.
      children: (item: ViewItem) =>
        h(ItemView, { key: item.id, item, width, expanded: false, masker, theme }),
    }),
    ...view.items.map((item) =>
      h(ItemView, { key: item.id, item, width, expanded, masker, theme, liveLines: Math.max(5, rows - 12) }),
    ),
    running && !dialog ? h(RunningLine, { progress: progressNow, waiting: !agent, theme }) : null,
    h(Box, { marginTop: 1 }),
    dialog
      ? h(DialogView, { dialog, masker, answerText: answer, theme })
      : picker
        ? h(SessionPicker, { rows: picker.rows, index: picker.index, theme, lines: Math.max(3, rows - 10) })
        : h(InputBox, {
            editor,
            active: true,
            hint: running ? 'type ahead; Enter sends once the turn ends' : 'message, /help, @file',
            completions,
            theme,
          }),
    h(StatusLine, { figures: view.status, window: props.window, extra, running, theme }),
    h(Text, null, ''),
  );
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const hint = (error as { hint?: unknown }).hint;
  return typeof hint === 'string' ? `${error.message} (${hint})` : error.message;
}
