import { useEffect, useRef, useState } from 'preact/hooks';
import { post } from '../api';
import { type DisplayMode, type OpenedView, theme, ViewHost } from '../app-host';
import { Json } from '../components';
import type { CallToolResult } from '../types';

type Question = { kind: 'link' | 'message'; text: string; resolve: (yes: boolean) => void };

/**
 * An MCP App view (SEP-1865): the tool's `ui://` resource behind the sandbox proxy, a page on the console's
 * second origin (framed `allow-scripts allow-same-origin`, so it keeps that origin) that loads the view in its
 * own frame sandboxed to `allow-scripts` alone. The page is the view's host (app-host.ts); what the view asks of
 * the person (open a link, send a message) waits for an answer in a dialog here, one question at a time.
 *
 * `result` and `cancelled` arrive when the call that opened the view ends; until then the view has its input.
 */
export function AppFrame(props: {
  tool: string;
  args: Record<string, unknown>;
  result?: CallToolResult;
  cancelled?: string;
}) {
  const frame = useRef<HTMLIFrameElement>(null);
  const host = useRef<ViewHost | undefined>(undefined);
  const [opened, setOpened] = useState<OpenedView>();
  const [error, setError] = useState<string>();
  const [src, setSrc] = useState<string>();
  const [height, setHeight] = useState(240);
  const [mode, setMode] = useState<DisplayMode>('inline');
  const [log, setLog] = useState<string[]>([]);
  const [messages, setMessages] = useState<string[]>([]);
  const [context, setContext] = useState<unknown>();
  const [closed, setClosed] = useState<string>();
  const [question, setQuestion] = useState<Question>();
  const questions = useRef<Promise<unknown>>(Promise.resolve());

  useEffect(() => {
    post<OpenedView>('/apps/open', { tool: props.tool }).then(setOpened, (e: Error) => setError(e.message));
  }, [props.tool]);

  useEffect(() => {
    if (!opened || !frame.current) return;
    // One question at a time: the next waits until the person answered the one before.
    const ask = (kind: Question['kind'], text: string) => {
      const answer = questions.current.then(
        () => new Promise<boolean>((resolve) => setQuestion({ kind, text, resolve })),
      );
      questions.current = answer;
      return answer;
    };
    const viewHost = new ViewHost(
      frame.current,
      opened,
      {
        confirmLink: (url) => ask('link', url),
        confirmMessage: (text) => ask('message', text),
        size: (h) => {
          if (h !== undefined) setHeight(Math.min(2000, Math.max(60, Math.ceil(h))));
        },
        log: (line) => setLog((l) => [...l.slice(-19), line]),
        context: setContext,
        recorded: (text) => setMessages((m) => [...m.slice(-49), text]),
        displayMode: setMode,
      },
      props.args,
    );
    host.current = viewHost;
    // The proxy loads only once the host listens: its ready notice cannot be missed.
    void viewHost.connect().then(
      () => setSrc(opened.proxy),
      (e: Error) => setError(e.message),
    );
    const dark = matchMedia('(prefers-color-scheme: dark)');
    const onTheme = () => viewHost.hostContextChanged({ theme: theme() });
    dark.addEventListener('change', onTheme);
    return () => {
      dark.removeEventListener('change', onTheme);
      // Leaving the page: the view is told, but the frame goes with the page whether it answers or not.
      void viewHost.teardown('the console page left the view');
    };
  }, [opened]);

  useEffect(() => {
    if (props.result) host.current?.toolResult(props.result);
    else if (props.cancelled !== undefined) host.current?.toolCancelled(props.cancelled);
  }, [opened, props.result, props.cancelled]);

  const answer = (yes: boolean) => {
    question?.resolve(yes);
    setQuestion(undefined);
  };
  const close = async () => {
    const viewHost = host.current;
    if (!viewHost) return;
    const answered = await viewHost.teardown('closed by the user');
    setSrc(undefined);
    setClosed(answered ? 'the view answered its teardown' : 'the view did not answer its teardown in time');
  };

  if (error) return <p class="error">App view: {error}</p>;
  if (!opened) return <p class="muted">Loading the app view…</p>;
  return (
    <section class={`app-view${mode === 'fullscreen' ? ' fullscreen' : ''}`} data-testid="app-view">
      <h2>
        App view <small class="muted">{opened.uri}</small>{' '}
        {!closed && (
          <>
            <button
              type="button"
              onClick={() => host.current?.setMode(mode === 'inline' ? 'fullscreen' : 'inline')}
            >
              {mode === 'inline' ? 'Full screen' : 'Exit full screen'}
            </button>{' '}
            <button type="button" onClick={() => void close()}>
              Close view
            </button>
          </>
        )}
      </h2>
      {closed ? (
        <p class="muted" data-testid="app-closed">
          View closed: {closed}.
        </p>
      ) : (
        <iframe
          ref={frame}
          title={`MCP App ${opened.uri}`}
          src={src}
          sandbox="allow-scripts allow-same-origin"
          referrerpolicy="no-referrer"
          class={opened.prefersBorder === false ? 'borderless' : ''}
          height={mode === 'fullscreen' ? undefined : height}
        />
      )}
      {question && (
        <ViewQuestion question={question} uri={opened.uri} server={opened.server} onAnswer={answer} />
      )}
      {messages.length > 0 && (
        <div data-testid="app-messages">
          <h3>Messages from the view</h3>
          <p class="muted small">
            Recorded here, not sent: the console runs no model conversation to add them to.
          </p>
          {messages.map((m, i) => (
            <pre key={i}>{m}</pre>
          ))}
        </div>
      )}
      {context !== undefined && (
        <div data-testid="app-context">
          <h3>Model context from the view</h3>
          <p class="muted small">
            Kept for this view (each update replaces the last); the console runs no model turns, so no model
            reads it.
          </p>
          <Json value={context} />
        </div>
      )}
      {log.length > 0 && <pre class="small">{log.join('\n')}</pre>}
    </section>
  );
}

function ViewQuestion(props: {
  question: Question;
  uri: string;
  server: string;
  onAnswer: (yes: boolean) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const { kind, text } = props.question;
  return (
    <dialog
      ref={dialog}
      class="approval"
      data-testid={`app-${kind}-dialog`}
      aria-label={kind === 'link' ? 'Open a link' : 'Message from a view'}
      onCancel={() => props.onAnswer(false)}
    >
      <h2>{kind === 'link' ? 'Open this link?' : 'The view asks to send a message'}</h2>
      <p>
        From the view <code>{props.uri}</code> of server <b>{props.server}</b>
        {kind === 'link' ? ', in a new tab:' : ':'}
      </p>
      <pre data-testid="app-question-text">{text}</pre>
      {kind === 'message' && (
        <p class="muted">
          The console runs no model conversation: recording keeps the message with this view, and the view is
          told it was not sent to a model.
        </p>
      )}
      <div class="buttons">
        <button type="button" class="primary" onClick={() => props.onAnswer(true)}>
          {kind === 'link' ? 'Open' : 'Record'}
        </button>
        <button type="button" class="danger" onClick={() => props.onAnswer(false)}>
          {kind === 'link' ? 'Cancel' : 'Refuse'}
        </button>
      </div>
    </dialog>
  );
}
