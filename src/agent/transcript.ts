import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ModelMessage, ToolCallPart, ToolModelMessage, ToolResultPart } from 'ai';
import { errorMessage, TackError } from '../errors.js';
import {
  ambiguousSessionError,
  type SessionIndex,
  type SessionRow,
  sessionIdMatches,
} from '../store/sessions.js';
import { isRecord } from '../util/is-record.js';
import { type SecretMasker, SHAPE_MASKER } from '../util/secrets.js';
import { compareText } from '../util/text-order.js';
import { type AgentEvent, type Usage, ZERO_USAGE } from './events.js';

/**
 * Session transcripts: every event of a session as one JSON line, `{ "seq": n, "at": ISO time, ...event }`, in
 * `<sessions dir>/<yyyy-mm-dd>/<session id>.jsonl`. The file is the truth; the session index in the store is
 * derived from it (and rebuilt from it on resume).
 *
 * Durability: each line is written with one synchronous write(2) on a kept descriptor before `append` returns, so
 * once it returns the line is in the kernel's page cache and survives the process dying in any way (an exception,
 * `process.exit`, SIGKILL). It is not fsynced: surviving a power cut or kernel panic would cost a disk flush per
 * event (0.3 to 3 ms measured on this project's CI disk, against ~10 µs for the write), for an event stream that is cheap to lose in that
 * case compared with a stalled agent loop.
 *
 * Secrets: every event is masked before it is written (util/secrets.ts): the known values the transcript is given
 * (the servers' env and header values) and key shapes. The session itself keeps the real values: only the record
 * is masked, so a resumed session reads back `••••` where a secret was.
 */

/** An event as stored: its 1-based position in the file and when it was written. */
export type TranscriptEvent = AgentEvent & { seq: number; at: string };
export type SessionStartEvent = Extract<AgentEvent, { type: 'session-start' }>;
export type SessionEndEvent = Extract<AgentEvent, { type: 'session-end' }>;
type ToolResultEvent = Extract<AgentEvent, { type: 'tool-result' }>;

/**
 * Something went wrong with the transcript while the session went on. Each kind is reported once per transcript.
 * - `write`: lines could not be written (disk full, I/O error). They are kept in memory (up to 16 MiB) and every
 *   later `append` tries again, oldest first, so the file stays complete and in order once the disk accepts
 *   writes again; a `notice` line then says what happened. Lines beyond the cap are lost (a gap in `seq`).
 * - `removed`: the file was deleted under the running session (its directory removed). It is recreated from the
 *   still-open descriptor, so nothing is lost; if that fails, this says so.
 * - `index`: the session index could not be updated (the transcript itself is fine).
 * - `serialize`: an event could not be turned into JSON; a `notice` line stands in for it.
 */
export interface TranscriptFailure {
  kind: 'write' | 'removed' | 'index' | 'serialize';
  file: string;
  message: string;
  cause?: unknown;
}

export interface TranscriptHealth {
  /** Lines not yet written (writes are failing). */
  pendingEvents: number;
  /** Lines given up on because too many were pending. */
  droppedEvents: number;
}

export interface CreateTranscriptOptions {
  /** The sessions directory (`<stateDir>/sessions`); the file goes in a dated folder under it. */
  dir: string;
  /** Default: a new id from `newSessionId()`. */
  sessionId?: string;
  index?: SessionIndex;
  /** Default: failures are ignored (they never throw into the session). */
  onError?: (failure: TranscriptFailure) => void;
  /** What to mask in every event; default key shapes only (`SHAPE_MASKER`). */
  secrets?: SecretMasker;
}

export interface ReopenTranscriptOptions {
  file: string;
  sessionId: string;
  /** The `seq` of the next line: one more than the last one in the file. */
  nextSeq: number;
  /** The index row as the transcript left it, so the next updates keep its start time, title and totals. */
  row?: SessionRow;
  index?: SessionIndex;
  onError?: (failure: TranscriptFailure) => void;
  secrets?: SecretMasker;
}

const MAX_PENDING_BYTES = 16 * 1024 * 1024;
const TITLE_MAX = 80;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A new session id, `yyyymmdd-hhmm-<8 hex>` in UTC (`20261130-0215-1a2b3c4d`): ids sort by start time as plain
 * strings, and 32 random bits keep two sessions started in the same minute apart. The tail is the short form to
 * show and type (`SessionIndex.findByPrefix` matches a prefix of it as well as of the whole id).
 */
export function newSessionId(now = new Date()): string {
  const iso = now.toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

/** A session id is a file name: letters, digits, `.`, `_`, `-`. */
function checkSessionId(id: string): void {
  if (!SESSION_ID.test(id)) {
    throw new TackError('USAGE', `'${id}' is not a valid session id`, {
      hint: 'Use letters, digits, dots, dashes and underscores only.',
    });
  }
}

/** Appends a session's events to its transcript and keeps its row in the session index current. */
export class Transcript {
  readonly sessionId: string;
  readonly file: string;
  #fd: number;
  #nextSeq: number;
  /** The last write stopped part-way through a line: the next one starts on a new line. */
  #torn: boolean;
  #closed = false;
  readonly #pending: Buffer[] = [];
  #pendingBytes = 0;
  #dropped = 0;
  /** The current run of failed writes: when it began, why, and how many lines it delayed or lost. */
  #outage: { since: string; error: string; late: number; dropped: number } | undefined;
  readonly #reported = new Set<TranscriptFailure['kind']>();
  readonly #index: SessionIndex | undefined;
  readonly #onError: ((failure: TranscriptFailure) => void) | undefined;
  readonly #secrets: SecretMasker;
  #row: SessionRow | undefined;
  #title: string | undefined;
  /** Settles when every index write started so far has (indexWritten). */
  #indexed: Promise<void> = Promise.resolve();

  private constructor(init: {
    file: string;
    sessionId: string;
    fd: number;
    nextSeq: number;
    torn: boolean;
    row: SessionRow | undefined;
    index: SessionIndex | undefined;
    onError: ((failure: TranscriptFailure) => void) | undefined;
    secrets: SecretMasker | undefined;
  }) {
    this.file = init.file;
    this.sessionId = init.sessionId;
    this.#fd = init.fd;
    this.#nextSeq = init.nextSeq;
    this.#torn = init.torn;
    this.#row = init.row;
    this.#title = init.row?.title;
    this.#index = init.index;
    this.#onError = init.onError;
    this.#secrets = init.secrets ?? SHAPE_MASKER;
  }

  /** Creates `<dir>/<yyyy-mm-dd>/<sessionId>.jsonl` (UTC date); an existing file is refused, not appended to. */
  static create(options: CreateTranscriptOptions): Transcript {
    const now = new Date();
    const sessionId = options.sessionId ?? newSessionId(now);
    checkSessionId(sessionId);
    const file = join(options.dir, now.toISOString().slice(0, 10), `${sessionId}.jsonl`);
    let fd: number;
    try {
      mkdirSync(dirname(file), { recursive: true });
      // Read access as well as append: a deleted file is recreated from what this descriptor still holds.
      fd = openSync(file, 'ax+');
    } catch (error) {
      throw new TackError(
        'STORE_FAILED',
        `${file}: cannot create the session transcript (${errorMessage(error)})`,
        {
          subject: { file },
          hint: 'Check that the state directory is writable, or point TACK_HOME elsewhere.',
          cause: error,
        },
      );
    }
    return new Transcript({
      file,
      sessionId,
      fd,
      nextSeq: 1,
      torn: false,
      row: undefined,
      index: options.index,
      onError: options.onError,
      secrets: options.secrets,
    });
  }

  /** Appends to an existing transcript (resume); `openForResume` is the usual way in. */
  static reopen(options: ReopenTranscriptOptions): Transcript {
    let fd: number;
    let torn = false;
    try {
      fd = openSync(options.file, 'a+');
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        // A crash mid-write left a fragment without its newline: new lines must not be glued onto it.
        torn = last[0] !== 0x0a;
      }
    } catch (error) {
      throw new TackError(
        'STORE_FAILED',
        `${options.file}: cannot open the session transcript (${errorMessage(error)})`,
        {
          subject: { file: options.file },
          cause: error,
        },
      );
    }
    return new Transcript({
      file: options.file,
      sessionId: options.sessionId,
      fd,
      nextSeq: options.nextSeq,
      torn,
      row: options.row,
      index: options.index,
      onError: options.onError,
      secrets: options.secrets,
    });
  }

  /** The `seq` the next appended event gets. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  get health(): TranscriptHealth {
    return { pendingEvents: this.#pending.length, droppedEvents: this.#dropped };
  }

  /**
   * Writes the event as one line before returning (`text-delta` events are skipped: the next `message` holds
   * their text). Never throws for an I/O failure: see `TranscriptFailure`.
   */
  append(event: AgentEvent): void {
    if (this.#closed) throw new Error(`${this.file}: append after the transcript was closed`);
    if (event.type === 'text-delta') return;
    const at = new Date().toISOString();
    const seq = this.#nextSeq++;
    this.#enqueue(this.#serialize(seq, at, event));
    this.#flush(at);
    this.#track(event, at);
  }

  /** Resolves when every index update made so far is written (or reported as failed). */
  indexWritten(): Promise<void> {
    return this.#indexed;
  }

  /** Tries a last time to write what is pending, then closes the file. */
  close(): void {
    if (this.#closed) return;
    this.#flush(new Date().toISOString());
    this.#ensureLinked();
    this.#closed = true;
    try {
      closeSync(this.#fd);
    } catch {
      // Nothing is left to lose: every line was written or already reported.
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #serialize(seq: number, at: string, event: AgentEvent): Buffer {
    try {
      // Only messages carry binary content (file and image parts); base64 is what the AI SDK reads back.
      const binary = event.type === 'message' || event.type === 'compaction';
      const masked = this.#secrets.mask(event);
      return Buffer.from(`${JSON.stringify({ seq, at, ...masked }, binary ? binaryAsBase64 : undefined)}\n`);
    } catch (error) {
      const message = `a ${event.type} event could not be serialized (${errorMessage(error)})`;
      this.#report({ kind: 'serialize', file: this.file, message, cause: error });
      return Buffer.from(`${JSON.stringify({ seq, at, type: 'notice', text: `transcript: ${message}` })}\n`);
    }
  }

  #enqueue(line: Buffer): void {
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (!this.#outage) return;
    this.#outage.late++;
    if (this.#pendingBytes > MAX_PENDING_BYTES) {
      const newest = this.#pending.pop()!;
      this.#pendingBytes -= newest.length;
      this.#outage.late--;
      this.#outage.dropped++;
      this.#dropped++;
    }
  }

  #flush(at: string): void {
    while (this.#pending.length > 0) {
      const line = this.#pending[0]!;
      try {
        this.#write(line);
      } catch (error) {
        if (!this.#outage)
          this.#outage = { since: at, error: errorMessage(error), late: this.#pending.length, dropped: 0 };
        this.#report({
          kind: 'write',
          file: this.file,
          message: `${this.file}: cannot write the transcript (${errorMessage(error)}); events are kept in memory and written when it works again`,
          cause: error,
        });
        return;
      }
      this.#pending.shift();
      this.#pendingBytes -= line.length;
    }
    const outage = this.#outage;
    if (!outage) return;
    this.#outage = undefined;
    const lost = outage.dropped > 0 ? `, ${outage.dropped} were lost (the gap in seq)` : '';
    const text = `transcript: writes failed from ${outage.since} (${outage.error}); ${outage.late} events were written late${lost}`;
    this.#enqueue(this.#serialize(this.#nextSeq++, at, { type: 'notice', text }));
    this.#flush(at);
  }

  #write(line: Buffer): void {
    if (this.#torn) {
      writeSync(this.#fd, '\n');
      this.#torn = false;
    }
    let offset = 0;
    try {
      while (offset < line.length) {
        const written = writeSync(this.#fd, line, offset, line.length - offset);
        if (written <= 0) throw new Error('the write made no progress');
        offset += written;
      }
    } catch (error) {
      // The fragment stays in the file (readers skip it); the whole line is written again after it.
      if (offset > 0) this.#torn = true;
      throw error;
    }
  }

  /**
   * A kept descriptor writes happily into a file whose directory was removed, and the transcript would vanish at
   * exit: checked where the index is updated (a few times per step, one fstat each), and the file recreated from
   * the descriptor's content.
   */
  #ensureLinked(): void {
    let stats: ReturnType<typeof fstatSync>;
    try {
      stats = fstatSync(this.#fd);
    } catch {
      return;
    }
    if (stats.nlink > 0) return;
    try {
      const content = Buffer.alloc(stats.size);
      let read = 0;
      while (read < stats.size) {
        const n = readSync(this.#fd, content, read, stats.size - read, read);
        if (n <= 0) break;
        read += n;
      }
      mkdirSync(dirname(this.file), { recursive: true });
      const fd = openSync(this.file, 'a+');
      try {
        let offset = 0;
        while (offset < read) offset += writeSync(fd, content, offset, read - offset);
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      closeSync(this.#fd);
      this.#fd = fd;
      this.#report({
        kind: 'removed',
        file: this.file,
        message: `${this.file} was deleted while the session ran; it was recreated with everything written so far`,
      });
    } catch (error) {
      this.#report({
        kind: 'removed',
        file: this.file,
        message: `${this.file} was deleted while the session ran and cannot be recreated (${errorMessage(error)})`,
        cause: error,
      });
    }
  }

  /** Keeps the index row current at the few events that change it, not at every event. */
  #track(event: AgentEvent, at: string): void {
    const row = this.#row;
    switch (event.type) {
      case 'session-start':
        this.#ensureLinked();
        this.#row = {
          id: this.sessionId,
          parentId: event.parent?.sessionId ?? row?.parentId,
          startedAt: row?.startedAt ?? at,
          updatedAt: at,
          cwd: event.cwd,
          model: event.model,
          title: this.#title,
          status: 'running',
          file: this.file,
          guidelinesHash: event.guidelinesHash,
          steps: row?.steps ?? 0,
          inputTokens: row?.inputTokens ?? 0,
          outputTokens: row?.outputTokens ?? 0,
          costUsd: row?.costUsd ?? 0,
        };
        break;
      case 'message': {
        if (this.#title !== undefined) return;
        // Masked before it is cut to length: a cut could leave a key too short to be recognised.
        this.#title = titleOf(this.#secrets.mask(event.message));
        if (this.#title === undefined || !row) return;
        this.#row = { ...row, title: this.#title, updatedAt: at };
        break;
      }
      case 'usage':
        if (!row) return;
        this.#ensureLinked();
        this.#row = { ...row, ...totals(event.total), steps: Math.max(row.steps, event.step), updatedAt: at };
        break;
      case 'session-end':
        if (!row) return;
        this.#ensureLinked();
        this.#row = {
          ...row,
          ...totals(event.total),
          steps: event.steps,
          status: event.reason,
          updatedAt: at,
        };
        break;
      default:
        return;
    }
    const index = this.#index;
    const update = this.#row;
    if (!index || !update) return;
    // Started at once (the SQLite store writes before append() returns); a store whose writes can overtake one
    // another (PostgreSQL) keeps one session's upserts in order itself.
    const write = index.upsert(update);
    this.#indexed = Promise.all([this.#indexed, write])
      .then(() => {})
      .catch((error: unknown) =>
        this.#report({
          kind: 'index',
          file: this.file,
          message: `cannot update the session index (${errorMessage(error)}); the transcript is unaffected`,
          cause: error,
        }),
      );
  }

  #report(failure: TranscriptFailure): void {
    if (this.#reported.has(failure.kind)) return;
    this.#reported.add(failure.kind);
    try {
      this.#onError?.(failure);
    } catch {
      // A failing reporter must not take the session down either.
    }
  }
}

function binaryAsBase64(this: unknown, key: string, value: unknown): unknown {
  // JSON.stringify has already applied Buffer#toJSON to `value`; the holder still has the original.
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof Uint8Array) return Buffer.from(original).toString('base64');
  if (original instanceof ArrayBuffer) return Buffer.from(original).toString('base64');
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function totals(usage: Usage): Pick<SessionRow, 'inputTokens' | 'outputTokens' | 'costUsd'> {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd };
}

/** The first line a user would recognise a session by: the text of a user message, on one line, cut to 80. */
function titleOf(message: ModelMessage): string | undefined {
  if (!isMessage(message) || message.role !== 'user') return undefined;
  const text =
    typeof message.content === 'string'
      ? message.content
      : message.content
          .map((part) => (part.type === 'text' ? part.text : ''))
          .filter(Boolean)
          .join(' ');
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function isMessage(value: unknown): value is ModelMessage {
  return (
    isRecord(value) &&
    typeof value.role === 'string' &&
    ROLES.has(value.role) &&
    (typeof value.content === 'string' || Array.isArray(value.content))
  );
}

function isUsage(value: unknown): value is Usage {
  return isRecord(value) && typeof value.inputTokens === 'number' && typeof value.outputTokens === 'number';
}

export interface TranscriptContents {
  /** Every well-formed line, in file order; lines of event types this build does not know are kept. */
  events: TranscriptEvent[];
  /** Lines skipped (torn, not JSON, not an event) and gaps in `seq`, one sentence each. */
  problems: string[];
}

/** Reads a transcript. Damage (a crash mid-write, a lost line) is reported in `problems`, never thrown. */
export function readTranscript(file: string): TranscriptContents {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new TackError(
      'STORE_FAILED',
      `${file}: cannot read the session transcript (${errorMessage(error)})`,
      {
        subject: { file },
        cause: error,
      },
    );
  }
  const lines = text.split('\n');
  const events: TranscriptEvent[] = [];
  const problems: string[] = [];
  let previous: number | undefined;
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(
        i === lines.length - 1
          ? `${where}: the last line is incomplete (the session stopped while writing it); skipped`
          : `${where}: not valid JSON (a write cut short?); skipped`,
      );
      continue;
    }
    if (
      !isRecord(value) ||
      typeof value.type !== 'string' ||
      typeof value.seq !== 'number' ||
      typeof value.at !== 'string'
    ) {
      problems.push(`${where}: not a transcript event (no type, seq or at); skipped`);
      continue;
    }
    if (previous !== undefined && value.seq !== previous + 1) {
      problems.push(
        value.seq > previous + 1
          ? `${where}: seq jumps from ${previous} to ${value.seq}: ${value.seq - previous - 1} events are missing`
          : `${where}: seq ${value.seq} follows ${previous}`,
      );
    }
    previous = value.seq;
    events.push(value as TranscriptEvent);
  }
  return { events, problems };
}

export interface ResumeState {
  sessionId: string;
  /**
   * The history to continue from: the messages of the last `compaction` (if any), then every later `message`,
   * with tool calls left without a result by a crash given one (see `notes`).
   */
  messages: ModelMessage[];
  /** The last running totals the session reported. */
  usage: Usage;
  /** The highest step number reached: a resumed run continues numbering after it. */
  steps: number;
  /** Whether the last run ended (a `session-end` after the last `session-start`); false after a crash. */
  ended: boolean;
  lastEnd?: SessionEndEvent & { seq: number; at: string };
  lastStart?: SessionStartEvent & { seq: number; at: string };
  /** What was found and repaired, one sentence each, for the user and the log. */
  notes: string[];
}

/**
 * The state a session is resumed from. Tool calls the model made and never got a result for (the process died
 * after the assistant message was written) would make the history invalid for every provider, so each gets one:
 * the real result when its `tool-result` event made it to the file, else an error saying the outcome is unknown.
 */
export function resumeState(
  events: readonly TranscriptEvent[],
  options: { sessionId?: string } = {},
): ResumeState {
  let sessionId = options.sessionId;
  let base: ModelMessage[] = [];
  let later: ModelMessage[] = [];
  let usage: Usage = { ...ZERO_USAGE };
  let steps = 0;
  let ended = false;
  let lastEnd: ResumeState['lastEnd'];
  let lastStart: ResumeState['lastStart'];
  // A start followed by no message and no step (a chat opened and left, or switched away from) lost nothing:
  // saying it "did not end" would only alarm.
  let worked = false;
  const notes: string[] = [];
  const results = new Map<string, ToolResultEvent>();
  const started = new Set<string>();
  for (const event of events) {
    switch (event.type) {
      case 'session-start':
        sessionId ??= event.sessionId;
        lastStart = event;
        ended = false;
        worked = false;
        break;
      case 'message':
        worked = true;
        if (isMessage(event.message)) later.push(event.message);
        else notes.push(`seq ${event.seq}: a message event without a valid message was skipped`);
        break;
      case 'compaction':
        if (Array.isArray(event.messages) && event.messages.every(isMessage)) {
          base = [...event.messages];
          later = [];
        } else notes.push(`seq ${event.seq}: a compaction event without valid messages was skipped`);
        break;
      case 'step-start':
        worked = true;
        steps = Math.max(steps, event.step);
        break;
      case 'tool-call':
        started.add(event.callId);
        break;
      case 'tool-result':
        results.set(event.callId, event);
        break;
      case 'usage':
        if (isUsage(event.total)) usage = { ...ZERO_USAGE, ...event.total };
        steps = Math.max(steps, event.step);
        break;
      case 'session-end':
        lastEnd = event;
        ended = true;
        if (isUsage(event.total)) usage = { ...ZERO_USAGE, ...event.total };
        if (typeof event.steps === 'number') steps = Math.max(steps, event.steps);
        break;
      default:
        break;
    }
  }
  const messages = repairToolCalls([...base, ...later], results, started, notes);
  if (!ended && lastStart && worked)
    notes.push('the session did not end: it crashed, was killed, or is still running');
  const last = messages.at(-1);
  if (!ended && last?.role === 'user') notes.push('the last user message has no answer yet');
  return {
    sessionId: sessionId ?? '',
    messages,
    usage,
    steps,
    ended,
    ...(lastEnd ? { lastEnd } : {}),
    ...(lastStart ? { lastStart } : {}),
    notes,
  };
}

function repairToolCalls(
  messages: readonly ModelMessage[],
  results: ReadonlyMap<string, ToolResultEvent>,
  started: ReadonlySet<string>,
  notes: string[],
): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    out.push(message);
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    const answered = new Set<string>();
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
    // Results belong in the tool messages right after the call; later ones would not count for a provider.
    let end = i + 1;
    for (; end < messages.length; end++) {
      const next = messages[end]!;
      if (next.role !== 'tool') break;
      for (const part of next.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
    }
    const missing = message.content.filter(
      (part): part is ToolCallPart =>
        part.type === 'tool-call' && part.providerExecuted !== true && !answered.has(part.toolCallId),
    );
    if (missing.length === 0) continue;
    const parts = missing.map((call) => recoveredResult(call, results, started, notes));
    if (end === i + 1) {
      out.push({ role: 'tool', content: parts });
      continue;
    }
    for (let k = i + 1; k < end - 1; k++) out.push(messages[k]!);
    const lastTool = messages[end - 1] as ToolModelMessage;
    out.push({ ...lastTool, content: [...lastTool.content, ...parts] });
    i = end - 1;
  }
  return out;
}

/** Said to the model in place of a result the crash took: it must not assume the call did or did not happen. */
export const INTERRUPTED_TOOL_RESULT =
  'This tool call was interrupted: the session crashed before its result was recorded, so its outcome is unknown ' +
  '(it may not have run, or it may have run and had its effects). Check its effects, or call it again if that is ' +
  'safe.';

function recoveredResult(
  call: ToolCallPart,
  results: ReadonlyMap<string, ToolResultEvent>,
  started: ReadonlySet<string>,
  notes: string[],
): ToolResultPart {
  const recorded = results.get(call.toolCallId);
  const base = { type: 'tool-result' as const, toolCallId: call.toolCallId, toolName: call.toolName };
  if (recorded && typeof recorded.text === 'string') {
    notes.push(
      `${call.toolName} (${call.toolCallId}): its result was recorded but not the message carrying it; restored it`,
    );
    return {
      ...base,
      output: recorded.isError
        ? { type: 'error-text', value: recorded.text }
        : { type: 'text', value: recorded.text },
    };
  }
  notes.push(
    `${call.toolName} (${call.toolCallId}): no result (${started.has(call.toolCallId) ? 'it had started' : 'no sign it started'}); told the model its outcome is unknown`,
  );
  return { ...base, output: { type: 'error-text', value: INTERRUPTED_TOOL_RESULT } };
}

/** The index row a transcript implies; `undefined` when it has no `session-start`. */
export function sessionRowFromTranscript(
  file: string,
  events: readonly TranscriptEvent[],
  state: ResumeState = resumeState(events, { sessionId: basename(file, '.jsonl') }),
): SessionRow | undefined {
  const first = events.find((event) => event.type === 'session-start');
  const last = state.lastStart;
  if (!first || !last) return undefined;
  let title: string | undefined;
  for (const event of events) {
    const candidates =
      event.type === 'message' ? [event.message] : event.type === 'compaction' ? (event.messages ?? []) : [];
    title = candidates.map(titleOf).find((line) => line !== undefined);
    if (title !== undefined) break;
  }
  return {
    id: state.sessionId,
    parentId: first.parent?.sessionId,
    startedAt: first.at,
    updatedAt: events.at(-1)?.at ?? first.at,
    cwd: last.cwd,
    model: last.model,
    title,
    status: state.ended && state.lastEnd ? state.lastEnd.reason : 'running',
    file,
    guidelinesHash: last.guidelinesHash,
    steps: state.steps,
    inputTokens: state.usage.inputTokens,
    outputTokens: state.usage.outputTokens,
    costUsd: state.usage.costUsd,
  };
}

/** Every `<dir>/<day>/<id>.jsonl`, oldest day first. */
export function listTranscriptFiles(dir: string): Array<{ id: string; file: string }> {
  if (!existsSync(dir)) return [];
  const found: Array<{ id: string; file: string }> = [];
  for (const day of readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name))) {
    if (!day.isDirectory()) continue;
    for (const name of readdirSync(join(dir, day.name)).sort()) {
      if (name.endsWith('.jsonl'))
        found.push({ id: name.slice(0, -'.jsonl'.length), file: join(dir, day.name, name) });
    }
  }
  return found;
}

/**
 * The transcript file of the session a user means by `idOrPrefix` (an id, or the start of it or of its random
 * tail): through the index when it has a row, else by scanning `dir` (`<stateDir>/sessions`).
 */
export async function findTranscript(
  dir: string,
  idOrPrefix: string,
  index: SessionIndex | undefined,
): Promise<string> {
  const wanted = idOrPrefix.trim();
  if (wanted === '') throw new TackError('USAGE', 'the session id is empty', { hint: 'Give a session id.' });
  const row = await index?.findByPrefix(wanted);
  if (row && existsSync(row.file)) return row.file;
  // The index is a cache of the files: when it has no row (or a stale path), the files decide.
  const files = listTranscriptFiles(dir);
  const exactId = row?.id ?? wanted;
  let matches = files.filter((entry) => entry.id === exactId);
  if (matches.length === 0 && !row) matches = files.filter((entry) => sessionIdMatches(entry.id, wanted));
  if (matches.length > 1)
    throw ambiguousSessionError(
      wanted,
      matches.map((entry) => entry.file),
    );
  const match = matches[0];
  if (match) return match.file;
  if (row) {
    throw new TackError('STORE_FAILED', `the transcript of session ${row.id} is gone (${row.file})`, {
      subject: { file: row.file },
      hint: `Transcripts are kept under ${dir}.`,
    });
  }
  throw new TackError('USAGE', `no session matches '${wanted}'`, {
    hint: `Check the id: transcripts are kept under ${dir}.`,
  });
}

export interface ResumedTranscript {
  file: string;
  state: ResumeState;
  /** What `readTranscript` found wrong with the file. */
  problems: string[];
  /** Appends to the same file; the caller appends a `session-start` with `resumedFrom` first. */
  transcript: Transcript;
}

/**
 * Finds a session by id or prefix (through the index, else by scanning `dir`), reads its transcript, brings its
 * index row back in line with the file, and opens the file for appending.
 */
export async function openForResume(
  dir: string,
  idOrPrefix: string,
  index: SessionIndex | undefined,
  options: { onError?: (failure: TranscriptFailure) => void; secrets?: SecretMasker } = {},
): Promise<ResumedTranscript> {
  const file = await findTranscript(dir, idOrPrefix, index);
  const { events, problems } = readTranscript(file);
  const sessionId = basename(file, '.jsonl');
  const state = resumeState(events, { sessionId });
  const row = sessionRowFromTranscript(file, events, state);
  if (row && index) {
    try {
      await index.upsert(row);
    } catch (error) {
      options.onError?.({
        kind: 'index',
        file,
        message: `cannot update the session index (${errorMessage(error)}); the transcript is unaffected`,
        cause: error,
      });
    }
  }
  const nextSeq = events.reduce((max, event) => Math.max(max, event.seq), 0) + 1;
  const transcript = Transcript.reopen({
    file,
    sessionId,
    nextSeq,
    ...(row ? { row } : {}),
    ...(index ? { index } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  return { file, state, problems, transcript };
}
