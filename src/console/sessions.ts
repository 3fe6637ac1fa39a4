import { closeSync, fstatSync, openSync, readSync, statSync, watch } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { AgentEvent, SubagentEvent } from '../agent/events.js';
import { readTranscript, type TranscriptEvent } from '../agent/transcript.js';
import { TackError } from '../errors.js';
import type { SessionRow } from '../store/sessions.js';
import type { TackStore } from '../store/store.js';
import { COMMON_HEADERS, sendJson } from './http.js';
import { type Liveness, localProbe, processAlive, sessionLiveness, transcriptFacts } from './liveness.js';
import { offsetOf, type Route } from './routes.js';
import { stepRequestView } from './step-requests.js';

/** Text of one event shown in the timeline: the transcript keeps all of it; the page shows this much. */
export const SHOWN_CHARS = 2000;
/** Sessions the index page lists at most (newest first); the page filters them. */
export const MAX_SESSIONS = 5000;

/** A transcript event as the timeline needs it: messages reduced to their role and text, long text cut. */
export type TimelineEvent =
  | { seq: number; at: string; type: 'message'; role: string; text: string; toolCalls: string[] }
  | {
      seq: number;
      at: string;
      type: 'compaction';
      tokensBefore: number;
      tokensAfter: number;
      elided: number;
      summarized: number;
    }
  | {
      seq: number;
      at: string;
      type: 'request';
      step: number;
      model: string;
      outcome: 'answered' | 'failed';
      bytes: number;
      sha256: string;
    }
  | (Exclude<AgentEvent, { type: 'message' | 'compaction' | 'text-delta' | 'request' }> & {
      seq: number;
      at: string;
    });

function cut(text: string): string {
  return text.length > SHOWN_CHARS
    ? `${text.slice(0, SHOWN_CHARS)}… (${text.length - SHOWN_CHARS} more characters)`
    : text;
}

function partText(part: unknown): string {
  if (typeof part !== 'object' || part === null) return '';
  const p = part as { type?: unknown; text?: unknown; toolName?: unknown; output?: unknown };
  if (p.type === 'text' || p.type === 'reasoning') return typeof p.text === 'string' ? p.text : '';
  if (p.type === 'tool-result') {
    const output = p.output as { value?: unknown } | undefined;
    return `[result of ${String(p.toolName)}] ${typeof output?.value === 'string' ? output.value : JSON.stringify(output?.value ?? '')}`;
  }
  return '';
}

export function compactEvent(event: TranscriptEvent): TimelineEvent | undefined {
  const { seq, at } = event;
  switch (event.type) {
    case 'text-delta':
      return undefined;
    case 'message': {
      const { role, content } = event.message as { role: string; content: unknown };
      const parts = Array.isArray(content) ? content : [];
      const text = typeof content === 'string' ? content : parts.map(partText).filter(Boolean).join('\n');
      const toolCalls = parts
        .filter(
          (p): p is { type: 'tool-call'; toolName: string } =>
            (p as { type?: unknown })?.type === 'tool-call',
        )
        .map((p) => String(p.toolName));
      return { seq, at, type: 'message', role, text: cut(text), toolCalls };
    }
    case 'compaction':
      return {
        seq,
        at,
        type: 'compaction',
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
        elided: event.elidedToolResults,
        summarized: event.summarizedMessages,
      };
    case 'request': {
      // The body is rebuilt on demand (GET .../requests/<n>, step-requests.ts): the timeline says it was sent.
      const { step, model, outcome, bytes, sha256 } = event;
      return { seq, at, type: 'request', step, model, outcome, bytes, sha256 };
    }
    case 'tool-result':
    case 'tool-call':
      return { ...cutCall(event), seq, at };
    case 'subagent':
      // A sub-agent's own steps, calls and results, nested under the `task` call: cut like the parent's.
      return { ...event, event: cutCall(event.event) };
    case 'session-end':
      return { ...event, ...(event.answer !== undefined ? { answer: cut(event.answer) } : {}) };
    default:
      return event as TimelineEvent;
  }
}

/** A tool call's arguments and a result's text, cut to what the timeline shows; other events as they are. */
function cutCall<E extends SubagentEvent>(event: E): E {
  if (event.type === 'tool-result') return { ...event, text: cut(String(event.text ?? '')) };
  if (event.type === 'tool-call') return { ...event, arguments: cutArguments(event.arguments) };
  return event;
}

function cutArguments(args: unknown): unknown {
  const text = JSON.stringify(args ?? null);
  return text.length > SHOWN_CHARS ? { truncated: cut(text) } : args;
}

/**
 * The index, newest first, with `running` rows whose process is gone shown as `abandoned` (and those whose
 * transcript ended as their end's reason is not known here: `ended` rows keep the index's word until it updates).
 */
export async function listSessions(store: TackStore): Promise<SessionRow[]> {
  const rows = await store.sessions.list({ limit: MAX_SESSIONS });
  const probe = localProbe();
  return rows.map((row) =>
    row.status === 'running' && sessionLiveness(row.status, transcriptFacts(row.file), probe) === 'abandoned'
      ? { ...row, status: 'abandoned' }
      : row,
  );
}

export interface SessionDetail {
  session: SessionRow;
  children: SessionRow[];
  events: TimelineEvent[];
  problems: string[];
  /** Byte offset the live stream continues from. */
  offset: number;
  /** Whether the session still runs: only a live one is followed (sessionLiveness). */
  liveness: Liveness;
}

/** A session's row in the index: SESSION (404) when it has none. */
async function indexedSession(store: TackStore, id: string): Promise<SessionRow> {
  const session = await store.sessions.get(id);
  if (!session)
    throw new TackError('SESSION', `no session ${id} in the index`, { hint: 'Pick one from the list.' });
  return session;
}

export async function sessionDetail(store: TackStore, id: string): Promise<SessionDetail> {
  const session = await indexedSession(store, id);
  const offset = sizeOf(session.file);
  const { events, problems } = readTranscript(session.file);
  const children = (await listSessions(store)).filter((row) => row.parentId === id);
  const liveness = sessionLiveness(session.status, transcriptFacts(session.file), localProbe());
  return {
    session: liveness === 'abandoned' ? { ...session, status: 'abandoned' } : session,
    liveness,
    children,
    events: events.map(compactEvent).filter((e): e is TimelineEvent => e !== undefined),
    problems,
    offset,
  };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Server-sent events of a transcript as it is written, from byte `offset` on: each complete line becomes one
 * `event` message (compacted as above); the stream ends after `session-end`, when the client goes, or when the
 * session's process is found gone (checked at each poll: it can no longer write its end). The file is watched
 * (inotify) with a one-second poll behind it, since a watch can miss appends on some file systems.
 */
export function streamTranscript(file: string, offset: number, res: ServerResponse): void {
  const facts = transcriptFacts(file);
  const probe = localProbe();
  const gone = () => facts.pid !== undefined && facts.hostname === probe.hostname && !processAlive(facts.pid);
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(': live\n\n');
  let position = offset;
  let rest = '';
  let closed = false;
  let fd: number | undefined;
  const read = () => {
    if (closed) return;
    try {
      fd ??= openSync(file, 'r');
      const size = fstatSync(fd).size;
      if (size < position) position = 0;
      while (position < size) {
        const buffer = Buffer.alloc(Math.min(1 << 20, size - position));
        const n = readSync(fd, buffer, 0, buffer.length, position);
        if (n <= 0) break;
        position += n;
        rest += buffer.subarray(0, n).toString('utf8');
      }
    } catch {
      return;
    }
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      let event: TranscriptEvent;
      try {
        event = JSON.parse(line) as TranscriptEvent;
      } catch {
        continue;
      }
      const shown = compactEvent(event);
      if (shown) res.write(`data: ${JSON.stringify(shown)}\n\n`);
      if (event.type === 'session-end') {
        stop();
        res.end();
        return;
      }
    }
  };
  let watcher: ReturnType<typeof watch> | undefined;
  try {
    watcher = watch(file, () => read());
  } catch {
    watcher = undefined;
  }
  const poll = setInterval(() => {
    read();
    if (closed || !gone()) return;
    // What the process wrote before it went is sent (read above); nothing more will come.
    stop();
    res.end();
  }, 1000);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const stop = () => {
    closed = true;
    watcher?.close();
    clearInterval(poll);
    clearInterval(keepAlive);
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  res.on('close', stop);
  read();
}

/** A session's page without a store to read it from: said in the answer, as the page shows it. */
const NO_STORE = { error: { message: 'no store' } };

/** The session index, a session's timeline, its transcript followed live, and the request body of any step. */
export const sessionRoutes: Route[] = [
  {
    method: 'GET',
    path: 'sessions',
    json: ({ context: { host } }) => (host.store ? listSessions(host.store) : []),
  },
  {
    method: 'GET',
    path: 'sessions/:session',
    json: ({ context: { host }, params }) =>
      host.store ? sessionDetail(host.store, params.session!) : NO_STORE,
  },
  {
    method: 'GET',
    path: 'sessions/:session/live',
    async stream({ context: { host }, params, query }, res) {
      if (!host.store) return sendJson(res, 200, NO_STORE);
      const detail = await indexedSession(host.store, params.session!);
      streamTranscript(detail.file, offsetOf(query), res);
    },
  },
  {
    method: 'GET',
    path: 'sessions/:session/requests/:step',
    async json({ context: { host }, params }) {
      // No store, no index: the session is as unknown as one the index lacks.
      if (!host.store) throw new TackError('SESSION', `no session ${params.session}: no store`);
      const session = await indexedSession(host.store, params.session!);
      return stepRequestView(session.file, params.step!);
    },
  },
];
